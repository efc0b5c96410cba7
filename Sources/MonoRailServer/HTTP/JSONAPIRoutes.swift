import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
import NIOCore

/// JSON:API 1.1, as `monorail serve --conventions jsonapi` speaks it:
///
/// ```
/// GET    /trains?filter[company]=A&filter[max_speed.gte]=100&sort=-max_speed&page[number]=2&page[size]=20
///        &include=cars&fields[trains]=company
/// GET    /trains/1                        POST /trains          PATCH /trains/1      DELETE /trains/1
/// GET    /trains/1/cars                   the related records
/// GET    /trains/1/relationships/cars     the linkage; POST adds, DELETE removes, PATCH replaces
/// POST   /operations                      the Atomic Operations extension, with lid
/// ```
///
/// Bodies are `application/vnd.api+json` both ways: a request body of another media type, or with
/// media type parameters besides `ext` and `profile`, is 415; an `Accept` that lists the media type
/// only with such parameters is 406. Refusals are error documents; a record's validation errors
/// point at its attributes and relationships (422).
struct JSONAPIRoutes: Sendable {
    let store: RecordStore
    let records: RecordRoutes
    let documents: JSONAPIDocuments

    init(store: RecordStore, records: RecordRoutes) {
        self.store = store
        self.records = records
        self.documents = JSONAPIDocuments(schema: store.schema)
    }

    func install(on router: Router<BasicRequestContext>) {
        router.post("/operations") { request, _ in try await operations(request) }
        router.get("/:resource") { request, context in try list(request, context) }
        router.post("/:resource") { request, context in try await create(request, context) }
        router.get("/:resource/:id") { request, context in try show(request, context) }
        router.patch("/:resource/:id") { request, context in try await update(request, context) }
        router.delete("/:resource/:id") { request, context in try await destroy(request, context) }
        router.get("/:resource/:id/:relationship") { request, context in try related(request, context) }
        router.get("/:resource/:id/relationships/:relationship") { request, context in
            try linkage(request, context)
        }
        for method in [HTTPRequest.Method.post, .patch, .delete] {
            router.on("/:resource/:id/relationships/:relationship", method: method) { request, context in
                try await membership(request, context)
            }
        }
    }

    // MARK: - Negotiation

    /// The extensions a request body's media type names; 415 for another media type, or for
    /// parameters besides `ext` and `profile`.
    func extensions(of request: Request) throws -> Set<String> {
        try negotiateAccept(request)
        guard let contentType = request.headers[.contentType] else {
            throw JSONAPIProblem(.unsupportedMediaType, "send the body as \(JSONAPIDocuments.mediaType)")
        }
        let (essence, parameters) = Self.split(contentType)
        guard essence == JSONAPIDocuments.mediaType else {
            throw JSONAPIProblem(
                .unsupportedMediaType, "send the body as \(JSONAPIDocuments.mediaType), not \(essence)")
        }
        guard parameters.keys.allSatisfy({ $0 == "ext" || $0 == "profile" }) else {
            throw JSONAPIProblem(
                .unsupportedMediaType, "the media type takes no parameters but ext and profile")
        }
        let named = Set((parameters["ext"] ?? "").split(separator: " ").map(String.init))
        guard named.isSubset(of: [JSONAPIDocument.atomicExtension]) else {
            throw JSONAPIProblem(
                .unsupportedMediaType, "the only extension served is \(JSONAPIDocument.atomicExtension)")
        }
        return named
    }

    /// 406 when `Accept` lists the JSON:API media type only with parameters it may not have.
    func negotiateAccept(_ request: Request) throws {
        guard let accept = request.headers[.accept] else { return }
        let listed = accept.split(separator: ",").map { Self.split(String($0)) }.filter {
            $0.essence == JSONAPIDocuments.mediaType
        }
        guard !listed.isEmpty else { return }
        let acceptable = listed.contains { _, parameters in
            parameters.keys.allSatisfy { $0 == "ext" || $0 == "profile" || $0 == "q" }
        }
        if !acceptable {
            throw JSONAPIProblem(.notAcceptable, "\(JSONAPIDocuments.mediaType) is served without parameters")
        }
    }

    /// A media type's essence, lower-cased, and its parameters, their quotes removed.
    static func split(_ mediaType: String) -> (essence: String, parameters: [String: String]) {
        let parts = mediaType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        var parameters: [String: String] = [:]
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            parameters[pair[0].lowercased()] = value
        }
        return ((parts.first ?? "").lowercased(), parameters)
    }

    /// A document answered as `application/vnd.api+json`.
    static func answer(_ status: HTTPResponse.Status, _ document: JSONValue) -> WriteAnswer {
        var document = document
        if case .object(var members) = document {
            // Said in every document: the client may send graphs to POST /operations.
            members["jsonapi"] = ["version": "1.1", "ext": [.string(JSONAPIDocument.atomicExtension)]]
            document = .object(members)
        }
        var answer = WriteAnswer(status, document)
        answer.headers[.contentType] = JSONAPIDocuments.mediaType
        return answer
    }

    // MARK: - Reading

    /// The query's parameters by name, both percent-decoded: `page%5Bsize%5D=2` is `page[size]`.
    static func parameters(_ request: Request) -> [String: String] {
        var decoded: [String: String] = [:]
        for (name, value) in request.uri.queryParameters {
            let key = String(name).removingPercentEncoding ?? String(name)
            decoded[key] = String(value).removingPercentEncoding ?? String(value)
        }
        return decoded
    }

    func resource(_ context: BasicRequestContext) throws -> ResourceSchema {
        guard let name = context.parameters.get("resource"), let resource = store.schema.resource(plural: name),
            resource.singleton != true
        else { throw JSONAPIProblem(.notFound, "no such resource") }
        return resource
    }

    func id(_ context: BasicRequestContext) -> String {
        let raw = context.parameters.get("id") ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    private func list(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try negotiateAccept(request)
        let resource = try resource(context)
        var filters: [String: String] = [:]
        var anyOf: [String: [String]] = [:]
        var ranges: [(column: String, comparison: String, value: String)] = []
        let parameters = Self.parameters(request)
        for (key, value) in parameters {
            guard key.hasPrefix("filter["), key.hasSuffix("]") else { continue }
            let inner = key.dropFirst("filter[".count).dropLast()
            let parts = inner.split(separator: ".", maxSplits: 1).map(String.init)
            switch parts.count == 2 ? parts[1] : nil {
            case "in"?: anyOf[parts[0]] = value.split(separator: ",").map(String.init)
            case let comparison? where ["gt", "gte", "lt", "lte"].contains(comparison):
                ranges.append((parts[0], comparison, value))
            case nil: filters[String(inner)] = value
            default: throw JSONAPIProblem(.badRequest, "filter[\(inner)] is not understood", pointer: nil)
            }
        }
        let order = (parameters["sort"] ?? "").split(separator: ",").map { key in
            key.hasPrefix("-") ? (String(key.dropFirst()), true) : (String(key), false)
        }
        let number = parameters["page[number]"].flatMap { Int($0) }.map { max(1, $0) }
        let offsetParameter = parameters["page[offset]"].flatMap { Int($0) }.map { max(0, $0) }
        let sizeParameter = (parameters["page[size]"] ?? parameters["page[limit]"]).flatMap { Int($0) }
            .map { min(max(1, $0), 1000) }
        let after = parameters["page[after]"]
        let paged = number != nil || offsetParameter != nil || sizeParameter != nil || after != nil
        let size = paged ? (sizeParameter ?? records.defaultPageSize ?? 25) : records.defaultPageSize
        let offset = offsetParameter ?? ((number ?? 1) - 1) * (size ?? 0)
        let (found, total) = try store.list(
            resource, filters: filters, anyOf: anyOf, ranges: ranges, order: order, after: after, limit: size,
            offset: offset)
        var document = try self.document(request, resource, records: found, many: true)
        document["meta"] = ["total": .int(Int64(total))]
        if let size {
            document["links"] = .object(
                Self.pageLinks(
                    request, resource: resource, size: size, offset: offset, total: total, after: after, found: found))
        }
        return Self.answer(.ok, .object(document)).response
    }

    /// `self`, `first`, `last`, `prev` and `next` (`null` past the ends) in the style the request
    /// paged with: page numbers, offsets, or a cursor (`page[after]`, the last record's id).
    static func pageLinks(
        _ request: Request, resource: ResourceSchema, size: Int, offset: Int, total: Int, after: String?,
        found: [JSONValue]
    ) -> [String: JSONValue] {
        let parameters = Self.parameters(request)
        let kept = (request.uri.query ?? "").split(separator: "&").filter { item in
            let name = (item.split(separator: "=").first.map(String.init) ?? "").removingPercentEncoding ?? ""
            return !name.hasPrefix("page[")
        }.map(String.init)
        func link(_ page: [String]) -> JSONValue {
            .string("/\(resource.pluralName)?" + (kept + page).joined(separator: "&"))
        }
        let sizeName = parameters["page[limit]"] != nil ? "page%5Blimit%5D" : "page%5Bsize%5D"
        if after != nil {
            let next: JSONValue =
                found.count < size
                ? .null
                : JSONAPIDocuments.text(found.last?[resource.primaryKeyName]).map {
                    link(["page%5Bafter%5D=\(APIPath.encodeSegment($0))", "\(sizeName)=\(size)"])
                } ?? .null
            return ["next": next]
        }
        if parameters["page[offset]"] != nil {
            let last = max(0, (total - 1) / size * size)
            return [
                "first": link(["page%5Boffset%5D=0", "\(sizeName)=\(size)"]),
                "last": link(["page%5Boffset%5D=\(last)", "\(sizeName)=\(size)"]),
                "prev": offset > 0
                    ? link(["page%5Boffset%5D=\(max(0, offset - size))", "\(sizeName)=\(size)"]) : .null,
                "next": offset + size < total
                    ? link(["page%5Boffset%5D=\(offset + size)", "\(sizeName)=\(size)"]) : .null,
            ]
        }
        let page = offset / size + 1
        let last = max(1, (total + size - 1) / size)
        return [
            "first": link(["page%5Bnumber%5D=1", "\(sizeName)=\(size)"]),
            "last": link(["page%5Bnumber%5D=\(last)", "\(sizeName)=\(size)"]),
            "prev": page > 1 ? link(["page%5Bnumber%5D=\(page - 1)", "\(sizeName)=\(size)"]) : .null,
            "next": page < last ? link(["page%5Bnumber%5D=\(page + 1)", "\(sizeName)=\(size)"]) : .null,
        ]
    }

    private func show(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try negotiateAccept(request)
        let resource = try resource(context)
        guard let record = try store.find(resource, id: id(context)) else {
            throw JSONAPIProblem(.notFound, "no \(resource.name) \(id(context))")
        }
        return Self.answer(.ok, .object(try document(request, resource, records: [record], many: false))).response
    }

    /// `{"data": …, "included": […]}`: the records as resource objects, with what `include=` names
    /// (one level) included, each once, and what `fields[type]=` keeps.
    func document(_ request: Request, _ resource: ResourceSchema, records: [JSONValue], many: Bool) throws
        -> [String: JSONValue]
    {
        let parameters = Self.parameters(request)
        let names = (parameters["include"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        var fieldsets: [String: Set<String>] = [:]
        for (key, value) in parameters where key.hasPrefix("fields[") && key.hasSuffix("]") {
            fieldsets[String(key.dropFirst("fields[".count).dropLast())] = Set(
                value.split(separator: ",").map(String.init))
        }
        var included: [JSONValue] = []
        var seen = Set<String>()
        var data: [JSONValue] = []
        for record in records {
            var linkage: [String: JSONValue] = [:]
            for name in names {
                guard let relationship = resource.relationships?.first(where: { $0.name == name }) else {
                    throw JSONAPIProblem(.badRequest, "\(name) is no relationship of \(resource.pluralName)")
                }
                guard let members = record.objectValue, let target = store.schema.target(of: relationship, in: members)
                else { continue }
                let related = try store.related(relationship, of: resource, record: record, target: target)
                if relationship.kind != .belongsTo {
                    let identifiers = related.compactMap { item in
                        JSONAPIDocuments.text(item[target.primaryKeyName]).map { documents.identifier(target, $0) }
                    }
                    linkage[name] = relationship.kind == .hasMany ? .array(identifiers) : (identifiers.first ?? .null)
                }
                for item in related {
                    guard let id = JSONAPIDocuments.text(item[target.primaryKeyName]),
                        seen.insert("\(target.pluralName)/\(id)").inserted
                    else { continue }
                    included.append(documents.resourceObject(item, target, fields: fieldsets[target.pluralName]))
                }
            }
            data.append(
                documents.resourceObject(record, resource, linkage: linkage, fields: fieldsets[resource.pluralName]))
        }
        var document: [String: JSONValue] = ["data": many ? .array(data) : (data.first ?? .null)]
        if !names.isEmpty { document["included"] = .array(included) }
        return document
    }

    /// The related records of a relationship: `GET /trains/1/cars`, `GET /cars/3/train`.
    private func related(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try negotiateAccept(request)
        let (resource, record, relationship) = try relationshipOf(context)
        guard let members = record.objectValue, let target = store.schema.target(of: relationship, in: members) else {
            return Self.answer(.ok, ["data": .null]).response
        }
        let found = try store.related(relationship, of: resource, record: record, target: target)
        let many = relationship.kind == .hasMany
        return Self.answer(.ok, .object(try document(request, target, records: found, many: many))).response
    }

    /// The linkage of a relationship: `GET /trains/1/relationships/cars`.
    private func linkage(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try negotiateAccept(request)
        let (resource, record, relationship) = try relationshipOf(context)
        return Self.answer(.ok, ["data": try linkage(of: relationship, resource, record)]).response
    }

    /// The linkage of a relationship of `record`; inside the transaction `db` when one is given.
    func linkage(
        of relationship: RelationshipSchema, _ resource: ResourceSchema, _ record: JSONValue,
        db: (any SQLConnection)? = nil
    ) throws -> JSONValue {
        guard let members = record.objectValue, let target = store.schema.target(of: relationship, in: members) else {
            return relationship.kind == .hasMany ? [] : .null
        }
        let related =
            try db.map { try store.related(relationship, of: resource, record: record, target: target, db: $0) }
            ?? store.related(relationship, of: resource, record: record, target: target)
        let identifiers = related.compactMap {
            JSONAPIDocuments.text($0[target.primaryKeyName]).map { documents.identifier(target, $0) }
        }
        return relationship.kind == .hasMany ? .array(identifiers) : (identifiers.first ?? .null)
    }

    func relationshipOf(_ context: BasicRequestContext) throws -> (ResourceSchema, JSONValue, RelationshipSchema) {
        let resource = try resource(context)
        let name = context.parameters.get("relationship") ?? ""
        guard let relationship = resource.relationships?.first(where: { $0.name == name }) else {
            throw JSONAPIProblem(.notFound, "\(name) is no relationship of \(resource.pluralName)")
        }
        guard let record = try store.find(resource, id: id(context)) else {
            throw JSONAPIProblem(.notFound, "no \(resource.name) \(id(context))")
        }
        return (resource, record, relationship)
    }
}
