import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MonoRailClient
import NIOCore

/// The Rails routes of every resource: index, show, create, update (PUT and PATCH) and destroy.
struct RecordRoutes: Sendable {
    let store: RecordStore
    let maxBodySize: Int
    let envelope: ServerEnvelope
    let uploadsDirectory: URL
    let maxUploadSize: Int
    /// The page size of an index asked for without one; `nil` lists everything.
    let defaultPageSize: Int?
    /// How the index pages its lists.
    let indexPaging: IndexPaging
    /// Writes sent with an `Idempotency-Key` are carried out once.
    let writes: IdempotentWrites

    init(
        store: RecordStore, maxBodySize: Int, envelope: ServerEnvelope, uploadsDirectory: URL, maxUploadSize: Int,
        defaultPageSize: Int? = nil, indexPaging: IndexPaging = .headers
    ) {
        self.defaultPageSize = defaultPageSize
        self.indexPaging = indexPaging
        self.store = store
        self.maxBodySize = maxBodySize
        self.envelope = envelope
        self.uploadsDirectory = uploadsDirectory
        self.maxUploadSize = maxUploadSize
        self.writes = IdempotentWrites(store: store)
    }

    static let totalCountHeader = HTTPField.Name("X-Total-Count")
    static let linkHeader = HTTPField.Name("Link")

    /// Query parameters that steer a response rather than filter records.
    static let reservedParameters: Set<String> = ["page", "per_page", "include", "order", "after"]

    /// Hummingbird matches `/trains/` like `/trains`, so Django-style trailing slashes need no routes
    /// of their own.
    func install(on router: Router<BasicRequestContext>) {
        // Singletons first: their fixed paths must win over the `/:resource/:id` pattern.
        for resource in store.schema.resources where resource.singleton == true {
            let path = "/" + (resource.path ?? resource.name)
            for route in [path, path + ".json"] {
                router.get(RouterPath(route)) { request, _ in try showSingleton(resource, request) }
                router.post(RouterPath(route)) { request, _ in try await writeSingleton(resource, request) }
                router.put(RouterPath(route)) { request, _ in try await writeSingleton(resource, request) }
                router.patch(RouterPath(route)) { request, _ in try await writeSingleton(resource, request) }
                router.delete(RouterPath(route)) { request, _ in try await destroySingleton(resource, request) }
            }
        }
        router.get("/:resource") { request, context in try index(request, context) }
        router.post("/:resource") { request, context in try await create(request, context) }
        router.get("/:resource/:id") { request, context in try show(request, context) }
        router.put("/:resource/:id") { request, context in try await update(request, context) }
        router.patch("/:resource/:id") { request, context in try await update(request, context) }
        router.delete("/:resource/:id") { request, context in try await destroy(request, context) }
        // Rails' nested resources, for every belongs_to: `/trains/1/cars`, `/trains/1/cars/3`. The
        // router wants one name per position, so the owner is `:resource/:id` here too.
        router.get("/:resource/:id/:nested") { request, context in try index(request, context) }
        router.post("/:resource/:id/:nested") { request, context in try await create(request, context) }
        router.get("/:resource/:id/:nested/:nested_id") { request, context in try show(request, context) }
        router.put("/:resource/:id/:nested/:nested_id") { request, context in try await update(request, context) }
        router.patch("/:resource/:id/:nested/:nested_id") { request, context in try await update(request, context) }
        router.delete("/:resource/:id/:nested/:nested_id") { request, context in
            try await destroy(request, context)
        }
    }

    /// Where a nested route puts its records: under the owner the path names, through the resource's
    /// `belongs_to` of the owner's resource.
    struct Nesting {
        let foreignKey: String
        /// The owner's id as its record holds it.
        let ownerID: JSONValue

        /// Whether a record belongs to the owner.
        func holds(_ record: JSONValue) -> Bool {
            guard case .object(let fields) = record, let value = fields[foreignKey] else { return false }
            return Nesting.text(value) == Nesting.text(ownerID)
        }

        static func text(_ value: JSONValue) -> String? {
            value.intValue.map(String.init) ?? value.stringValue
        }
    }

    /// The owner of a nested route, or `nil` for a route that is not nested; a 404 when the owner's
    /// resource is not one the resource belongs to, or the owner does not exist.
    func nesting(_ resource: ResourceSchema, _ context: BasicRequestContext) throws -> Nesting? {
        guard context.parameters.get("nested") != nil, let plural = context.parameters.get("resource") else {
            return nil
        }
        guard let owner = store.schema.resource(plural: plural), owner.singleton != true,
            let relationship = (resource.relationships ?? []).first(where: { relationship in
                relationship.kind == .belongsTo && !relationship.isPolymorphic
                    && store.schema.resource(singular: relationship.targetName)?.name == owner.name
            })
        else { throw APIProblem(.notFound) }
        let raw = context.parameters.get("id") ?? ""
        guard case .object(let record)? = try store.find(owner, id: raw.removingPercentEncoding ?? raw),
            let ownerID = record[owner.primaryKeyName]
        else { throw APIProblem(.notFound) }
        return Nesting(foreignKey: relationship.foreignKeyName(owner: resource), ownerID: ownerID)
    }

    /// The resource a path names: by its plural, or under ApiModel's conventions also by its
    /// singular (`/post/5.json`); a `.json` format suffix is ignored, as Rails ignores it.
    func resource(_ context: BasicRequestContext) throws -> ResourceSchema {
        guard let raw = context.parameters.get("nested") ?? context.parameters.get("resource") else {
            throw APIProblem(.notFound)
        }
        let name = Self.withoutFormat(raw)
        guard
            let resource = store.schema.resource(plural: name)
                ?? (envelope == .apiModel ? store.schema.resource(singular: name) : nil),
            resource.singleton != true
        else {
            throw APIProblem(.notFound)
        }
        return resource
    }

    /// Route parameters arrive percent-encoded; ids are compared decoded, as Rails does.
    func id(_ context: BasicRequestContext) -> String {
        let raw = Self.withoutFormat(context.parameters.get("nested_id") ?? context.parameters.get("id") ?? "")
        return raw.removingPercentEncoding ?? raw
    }

    static func withoutFormat(_ segment: String) -> String {
        segment.hasSuffix(".json") ? String(segment.dropLast(5)) : segment
    }

    private func index(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        let nesting = try nesting(resource, context)
        var filters: [String: String] = [:]
        var anyOf: [String: [String]] = [:]
        var ranges: [(column: String, comparison: String, value: String)] = []
        for (name, value) in request.uri.queryParameters {
            let key = String(name).removingPercentEncoding ?? String(name)
            if key.hasSuffix("[]") {
                anyOf[String(key.dropLast(2)), default: []].append(String(value))
            } else if key.hasSuffix("]"), let open = key.firstIndex(of: "[") {
                // `max_speed[gte]=100`
                let comparison = key[key.index(after: open)..<key.index(before: key.endIndex)]
                ranges.append((String(key[..<open]), String(comparison), String(value)))
            } else if !Self.reservedParameters.contains(key) {
                filters[key] = String(value)
            }
        }
        if let nesting, let owner = Nesting.text(nesting.ownerID) { filters[nesting.foreignKey] = owner }
        guard anyOf.values.reduce(0, { $0 + $1.count }) <= 1000 else {
            throw APIProblem(.badRequest, "at most 1000 values may be listed with []")
        }
        let parameters = request.uri.queryParameters
        var page = parameters.get("page", as: Int.self).map { max(1, $0) }
        var perPage = parameters.get("per_page", as: Int.self).map { min(max(1, $0), 1000) }
        var limit = page != nil || perPage != nil ? (perPage ?? defaultPageSize ?? 25) : defaultPageSize
        switch indexPaging {
        case .headers: break
        case .bare: (page, perPage, limit) = (nil, nil, nil)
        case .silentCap(let cap): limit = min(perPage ?? cap, cap)
        }
        let offset = ((page ?? 1) - 1) * (limit ?? 0)
        let order = (parameters.get("order") ?? "").split(separator: ",").map { key in
            key.hasPrefix("-") ? (String(key.dropFirst()), true) : (String(key), false)
        }
        let after = parameters.get("after")
        let (records, total) = try store.list(
            resource, filters: filters, anyOf: anyOf, ranges: ranges, order: order, after: after, limit: limit,
            offset: offset)
        var body: [String: JSONValue] = [resource.pluralName: .array(records)]
        try sideload(include(request), for: resource, records: records, into: &body)
        var response = try respond(
            request, .ok, wrap(body, main: resource.pluralName), lastModified: Self.lastModified(of: records))
        guard indexPaging == .headers else { return response }
        if let name = Self.totalCountHeader { response.headers[name] = String(total) }
        // A cursor page (`after`) links nothing: the next cursor is its last record's id.
        if let limit, after == nil, let name = Self.linkHeader {
            response.headers[name] = Self.links(
                path: nesting == nil ? "/\(resource.pluralName)" : request.uri.path, query: request.uri.query,
                page: page ?? 1, perPage: limit, total: total
            )
        }
        return response
    }

    private func show(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        let nesting = try nesting(resource, context)
        guard let record = try store.find(resource, id: id(context)), nesting?.holds(record) ?? true else {
            throw APIProblem(.notFound)
        }
        return try answer(request, resource, showing: record)
    }

    /// `{"train": {…}}`, with what `?include=` asks for beside it.
    func answer(_ request: Request, _ resource: ResourceSchema, showing record: JSONValue) throws -> Response {
        var body: [String: JSONValue] = [resource.name: record]
        try sideload(include(request), for: resource, records: [record], into: &body)
        return try respond(request, .ok, wrap(body, main: resource.name), lastModified: Self.lastModified(of: [record]))
    }

    private func include(_ request: Request) -> [String] {
        guard let value = request.uri.queryParameters.get("include") else { return [] }
        return value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Adds `?include=` relationships beside the main records, under the related resource's plural
    /// (`{"train": {…}, "cars": […]}`). Names that are no relationship are ignored.
    private func sideload(
        _ names: [String], for resource: ResourceSchema, records: [JSONValue], into body: inout [String: JSONValue]
    ) throws {
        guard envelope != .bare else { return }
        for name in names {
            guard let relationship = resource.relationships?.first(where: { $0.name == name }) else { continue }
            // By target: a polymorphic relationship's records may be of several resources.
            var related: [String: [JSONValue]] = [:]
            var seen: [String: Set<JSONValue>] = [:]
            for record in records {
                guard let members = record.objectValue, let target = store.schema.target(of: relationship, in: members)
                else { continue }
                for item in try store.related(relationship, of: resource, record: record, target: target)
                where seen[target.pluralName, default: []].insert(item[target.primaryKeyName] ?? .null).inserted {
                    related[target.pluralName, default: []].append(item)
                }
            }
            for (plural, items) in related { body[plural] = .array(items) }
        }
    }

    /// Applies the server's envelope style to a Rails-shaped body.
    func wrap(_ body: [String: JSONValue], main: String) -> JSONValue {
        switch envelope {
        case .rails, .apiModel, .objects, .jsonAPI: return .object(body)
        case .bare: return body[main] ?? .null
        case .namespace(let key): return [key: .object(body)]
        }
    }

    /// When the newest of the records changed, from their `updated_at`.
    static func lastModified(of records: [JSONValue]) -> Date? {
        records.compactMap {
            $0["updated_at"]?.stringValue.flatMap { DateFormat.iso8601WithFractionalSeconds.date(from: $0) }
        }
        .max()
    }

    /// Answers a GET with an ETag (and `Last-Modified` when the records say when they changed), or
    /// 304 when the client already has this representation: by `If-None-Match`, or without one by
    /// `If-Modified-Since` (RFC 9110 §13.2.2).
    private func respond(
        _ request: Request, _ status: HTTPResponse.Status, _ body: JSONValue, lastModified: Date? = nil
    ) throws -> Response {
        let format = ResponseFormat(request)
        let data = format.encode(body)
        let etag = Self.etag(of: data)
        var headers: HTTPFields = [.eTag: etag]
        if let lastModified { headers[.lastModified] = HTTPDate.format(lastModified) }
        if let match = request.headers[.ifNoneMatch] {
            if match == "*"
                || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag })
            {
                return Response(status: .notModified, headers: headers)
            }
        } else if let since = request.headers[.ifModifiedSince].flatMap(HTTPDate.parse), let lastModified,
            lastModified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = format.contentType
        headers[.vary] = "Accept"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A strong entity tag for a representation: a hash of its bytes.
    static func etag(of data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        return "\"\(String(hash, radix: 16))\""
    }

    /// The entity tag a show of the record answers with now, in the request's format; `nil` when
    /// there is no such record.
    private func currentETag(_ request: Request, _ resource: ResourceSchema, id: String, db: any SQLConnection) throws
        -> String?
    {
        guard let record = try store.show(resource, id: id, db: db) else { return nil }
        return etag(request, resource, show: record)
    }

    /// The entity tag of a show of `record`, which the transaction just wrote.
    private func currentETag(
        _ request: Request, _ resource: ResourceSchema, written record: JSONValue, db: any SQLConnection
    ) throws -> String {
        etag(request, resource, show: try store.show(resource, record: record, db: db))
    }

    private func etag(_ request: Request, _ resource: ResourceSchema, show record: JSONValue) -> String {
        Self.etag(of: ResponseFormat(request).encode(wrap([resource.name: record], main: resource.name)))
    }

    /// Whether the request's `If-Match` holds for the record's current entity tag: `*` for any
    /// record, else one of the listed tags by strong comparison (RFC 9110 §13.1.1). No `If-Match`
    /// always holds.
    func preconditionHolds(
        _ request: Request, _ resource: ResourceSchema, id: String, db: any SQLConnection
    ) throws -> Bool {
        guard let ifMatch = request.headers[.ifMatch] else { return true }
        guard let current = try currentETag(request, resource, id: id, db: db) else { return false }
        return ifMatch.trimmingCharacters(in: .whitespaces) == "*"
            || ifMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == current }
    }

    static func preconditionFailed(_ request: Request) -> WriteAnswer {
        WriteAnswer(
            .preconditionFailed,
            ["error": "Precondition Failed", "message": "the record changed since the If-Match entity tag"],
            format: ResponseFormat(request))
    }

    /// RFC 8288 links to the first, previous, next and last pages.
    static func links(path: String, query: String?, page: Int, perPage: Int, total: Int) -> String {
        let last = max(1, (total + perPage - 1) / perPage)
        let kept = (query ?? "").split(separator: "&").filter { !$0.hasPrefix("page=") && !$0.hasPrefix("per_page=") }
        func link(_ target: Int, _ relation: String) -> String {
            let parameters = kept + ["page=\(target)", "per_page=\(perPage)"]
            return "<\(path)?\(parameters.joined(separator: "&"))>; rel=\"\(relation)\""
        }
        var links = [link(1, "first")]
        if page > 1 { links.append(link(min(page - 1, last), "prev")) }
        if page < last { links.append(link(page + 1, "next")) }
        links.append(link(last, "last"))
        return links.joined(separator: ", ")
    }

    private func create(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let nesting = try nesting(resource, context)
        let format = ResponseFormat(request)
        return try await writes.run(request, read: try await attributes(of: request, for: resource)) {
            attributes, db in
            var nested: [(RelationshipSchema, [JSONValue])] = []
            do {
                var attributes = attributes ?? [:]
                // The path names the owner, as `@train.cars.create(params)` does in Rails.
                if let nesting { attributes[nesting.foreignKey] = nesting.ownerID }
                nested = try takeNestedAttributes(from: &attributes, of: resource)
                var record = try store.create(resource, attributes: attributes, db: db)
                if !nested.isEmpty {
                    try writeNestedAttributes(nested, of: resource, record: record, db: db)
                    record = try store.show(resource, record: record, db: db)
                }
                var answer = WriteAnswer(.created, wrap([resource.name: record], main: resource.name), format: format)
                if let id = record[resource.primaryKeyName], let text = id.intValue.map(String.init) ?? id.stringValue {
                    answer.headers[.location] = "/\(resource.pluralName)/\(APIPath.encodeSegment(text))"
                    answer.headers[.eTag] = try currentETag(request, resource, written: record, db: db)
                }
                return answer
            } catch let error as RecordValidationError {
                let answer = WriteAnswer.validation(error, envelope: envelope, root: resource.name, format: format)
                // Nested records may have been written: thrown, the transaction writes nothing.
                if !nested.isEmpty { throw RefusedWrite(answer: answer) }
                return answer
            }
        }
    }

    /// Applies the attributes when `If-Match` (if sent) still holds; answers with the record and
    /// the entity tag a show would now have, for the next `If-Match`.
    private func update(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let nesting = try nesting(resource, context)
        let id = id(context)
        let format = ResponseFormat(request)
        return try await writes.run(request, read: try await attributes(of: request, for: resource)) {
            attributes, db in
            if let nesting {
                guard let record = try store.show(resource, id: id, db: db), nesting.holds(record) else {
                    throw APIProblem(.notFound)
                }
            }
            guard try preconditionHolds(request, resource, id: id, db: db) else {
                return Self.preconditionFailed(request)
            }
            var nested: [(RelationshipSchema, [JSONValue])] = []
            do {
                var attributes = attributes ?? [:]
                nested = try takeNestedAttributes(from: &attributes, of: resource)
                guard var record = try store.update(resource, id: id, attributes: attributes, db: db) else {
                    throw APIProblem(.notFound)
                }
                if !nested.isEmpty {
                    try writeNestedAttributes(nested, of: resource, record: record, db: db)
                    record = try store.show(resource, record: record, db: db)
                }
                var answer = WriteAnswer(.ok, wrap([resource.name: record], main: resource.name), format: format)
                answer.headers[.eTag] = try currentETag(request, resource, written: record, db: db)
                return answer
            } catch let error as RecordValidationError {
                let answer = WriteAnswer.validation(error, envelope: envelope, root: resource.name, format: format)
                if !nested.isEmpty { throw RefusedWrite(answer: answer) }
                return answer
            }
        }
    }

    /// Deletes the record when `If-Match` (if sent) still holds.
    private func destroy(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let nesting = try nesting(resource, context)
        let id = id(context)
        return try await writes.run(request, read: nil) { _, db in
            if let nesting {
                guard let record = try store.show(resource, id: id, db: db), nesting.holds(record) else {
                    throw APIProblem(.notFound)
                }
            }
            guard try preconditionHolds(request, resource, id: id, db: db) else {
                // No record and no match is a 404, as without the header.
                guard try store.show(resource, id: id, db: db) != nil else { throw APIProblem(.notFound) }
                return Self.preconditionFailed(request)
            }
            guard try store.delete(resource, id: id, db: db) else { throw APIProblem(.notFound) }
            return WriteAnswer(status: .noContent)
        }
    }
}

/// An HTTP error answered as JSON: `{"error": "Not Found"}`.
struct APIProblem: Error, HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String?

    init(_ status: HTTPResponse.Status, _ message: String? = nil) {
        self.status = status
        self.message = message
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var body: JSONValue = ["error": .string(status.reasonPhrase)]
        if let message { body = ["error": .string(status.reasonPhrase), "message": .string(message)] }
        return JSONResponse.make(status, body, format: ResponseFormat(request))
    }
}

enum JSONResponse {
    /// A response whose body is `body` in the negotiated format (JSON unless asked otherwise).
    static func make(_ status: HTTPResponse.Status, _ body: JSONValue, format: ResponseFormat = .json) -> Response {
        WriteAnswer(status, body, format: format).response
    }

    /// The validation answer of the envelope, as ``WriteAnswer/validation(_:envelope:root:format:)``.
    static func validation(
        _ error: RecordValidationError, envelope: ServerEnvelope, root: String, format: ResponseFormat = .json
    ) -> Response {
        WriteAnswer.validation(error, envelope: envelope, root: root, format: format).response
    }
}

/// Answers anything no route took, and any unexpected error, as JSON — never an empty 404 or a 500
/// without a body.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let problem as APIProblem {
            return try problem.response(from: request, context: context)
        } catch let problem as JSONAPIProblem {
            return try problem.response(from: request, context: context)
        } catch let refused as RefusedWrite {
            return refused.answer.response
        } catch let error as HTTPError {
            return JSONResponse.make(error.status, ["error": .string(error.status.reasonPhrase)])
        } catch {
            context.logger.error("request failed: \(error)")
            return JSONResponse.make(.internalServerError, ["error": "Internal Server Error"])
        }
    }
}
