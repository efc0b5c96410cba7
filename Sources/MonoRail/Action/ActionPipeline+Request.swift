import Atomics
import Foundation
import HTTPTypes
import Logging

// The request: an action's HTTP request built, sent, and its failures told apart.
extension ActionPipeline {
    /// Works out the request of an action; sends nothing.
    func prepare(_ action: ModelAction<Model>) throws -> Prepared {
        var parameters = try self.parameters(of: action)
        var prepared =
            switch action.operation {
            case .create, .save, .delete: try prepareWrite(action, parameters: &parameters)
            default: try prepareRead(action, parameters: &parameters)
            }
        prepared.urlTemplate = urlTemplate(of: action)
        return prepared
    }

    /// What the app called, as spans and the request log name it: `Train.get`, `Train.save`.
    func name(of action: ModelAction<Model>) -> String {
        setup.typeName + "." + action.operationName
    }

    /// The route an action's path comes from, as OpenTelemetry's `url.template`.
    func urlTemplate(of action: ModelAction<Model>) -> String? {
        let routes = setup.conventions.routes
        switch action.operation {
        case .get, .singleton, .fetch: return setup.urlTemplate(for: routes.show)
        case .list: return action.path == nil ? setup.urlTemplate(for: routes.index) : action.urlTemplate
        case .page(let link): return setup.urlTemplate(ofPage: link)
        case .search: return setup.urlTemplate(for: routes.search)
        case .create: return setup.urlTemplate(for: routes.create)
        case .save: return setup.urlTemplate(for: routes.update)
        case .delete: return setup.urlTemplate(for: routes.destroy)
        }
    }

    /// The query parameters of an action: its own, a list's filter, rewritten by the model's
    /// `customSerialize` for a read, and the relationships to include.
    private func parameters(of action: ModelAction<Model>) throws -> [String: JSONValue] {
        var parameters = action.parameters
        if case .list(let filter) = action.operation { parameters.merge(filter) { _, filter in filter } }
        if action.verb.isRead, !parameters.isEmpty {
            if case .page = action.operation {} else { parameters = try Self.serialized(parameters, for: action.verb) }
        }
        if !action.include.isEmpty {
            parameters[setup.conventions.includeParameter] = .string(action.include.joined(separator: ","))
        }
        return parameters
    }

    /// The request of a read: get, a singleton's get, list, page, search, fetch.
    private func prepareRead(_ action: ModelAction<Model>, parameters: inout [String: JSONValue]) throws -> Prepared {
        let routes = setup.conventions.routes
        switch action.operation {
        case .get(let id):
            let path = try setup.path(for: routes.show, id: id, parameters: &parameters)
            return Prepared(action, .get, path, parameters: parameters, id: id)
        case .singleton:
            guard !routes.show.placeholders.contains("id") else {
                throw APIError(
                    .invalidRequest,
                    "\(Model.resourceSchema.typeName)'s show route \"\(routes.show)\" needs an id; a "
                        + "singleton resource's has none: conventions.routes = .singleton(\"/user.json\")")
            }
            let path = try setup.path(for: routes.show, parameters: &parameters)
            return Prepared(action, .get, path, parameters: parameters)
        case .list(let filter):
            let path =
                try action.path.map(setup.path(at:)) ?? setup.path(for: routes.index, parameters: &parameters)
            if setup.conventions.filterStyle == .jsonAPI {
                Self.familyFilter(filter, in: &parameters, setup.conventions)
            }
            return Prepared(action, .get, path, parameters: parameters)
        case .page(let url):
            return Prepared(action, .get, try setup.path(following: url), parameters: parameters)
        case .search(let term):
            if !routes.search.placeholders.contains("term") {
                parameters[setup.conventions.searchParameter] = .string(term)
            }
            let path = try setup.path(for: routes.search, term: term, parameters: &parameters)
            return Prepared(action, .get, path, parameters: parameters)
        case .fetch(let instance):
            let id = try Self.id(of: instance, toward: "fetch", route: routes.show)
            let path = try setup.path(for: routes.show, id: id, parameters: &parameters, instance: instance)
            return Prepared(action, .get, path, parameters: parameters, id: id)
        case .create, .save, .delete:
            throw APIError(.invalidRequest, "\(action.verb.rawValue) is not a read")
        }
    }

    /// The request of a write: create, save, delete, with the body of the instance's fields.
    private func prepareWrite(_ action: ModelAction<Model>, parameters: inout [String: JSONValue]) throws -> Prepared {
        let conventions = setup.conventions
        switch action.operation {
        case .create(let instance):
            let snapshot = instance._$state.snapshot()
            if let id = snapshot.id {
                throw APIError(
                    .invalidRequest,
                    "\(Model.resourceSchema.typeName) \(id.debugText) already exists on the server; use save()")
            }
            let (method, path) = try endpoint(of: .create, id: nil, instance: instance, parameters: &parameters)
            var body = try Model.encodeBody(snapshot.values, only: nil, setup: setup, verb: .create, store: store)
            if let id = action.clientID, setup.jsonAPI == nil { body.0 = adding(id, to: body.0) }
            if setup.jsonAPI != nil { body.0 = try setup.resourceDocument(body.0, id: action.clientID, store: store) }
            return Prepared(action, method, path, parameters: parameters, body: body, sent: snapshot.edits)
        case .save(let instance):
            let snapshot = instance._$state.snapshot()
            let id = try Self.id(of: instance, toward: "save", route: conventions.routes.update)
            let (method, path) = try endpoint(of: .update, id: id, instance: instance, parameters: &parameters)
            let only = conventions.sendsOnlyChanges ? snapshot.edits.indices.filter { snapshot.edits[$0] != 0 } : nil
            var body = try Model.encodeBody(snapshot.values, only: only, setup: setup, verb: .update, store: store)
            if conventions.sendsIDInBody, let id { body.0 = adding(id, to: body.0) }
            if setup.jsonAPI != nil { body.0 = try setup.resourceDocument(body.0, id: id, store: store) }
            return Prepared(action, method, path, parameters: parameters, id: id, body: body, sent: snapshot.edits)
        case .delete(let instance):
            let route = conventions.routes.destroy
            let id = try Self.id(of: instance, toward: "delete", route: route)
            // A route with no `:id` for a record with one: the id goes in the body, if the server
            // family sends ids that way.
            let body = id.flatMap { id -> (JSONValue, FileAttachments)? in
                guard conventions.sendsIDInBody, !route.placeholders.contains("id") else { return nil }
                return (adding(id, to: [:]), FileAttachments())
            }
            let (method, path) = try endpoint(of: .destroy, id: id, instance: instance, parameters: &parameters)
            return Prepared(action, method, path, parameters: parameters, id: id, body: body)
        default:
            throw APIError(.invalidRequest, "\(action.verb.rawValue) is not a write")
        }
    }

    /// The method and path of a write on a record, for the app's action and for the outbox's kept
    /// write alike: the conventions' route filled from the id and the instance's fields.
    func endpoint(
        of verb: ActionVerb, id: ResourceID?, instance: Model, parameters: inout [String: JSONValue]
    ) throws -> (HTTPRequest.Method, APIPath) {
        let conventions = setup.conventions
        switch verb {
        case .create:
            return (.post, try setup.path(for: conventions.routes.create, parameters: &parameters, instance: instance))
        case .destroy:
            return (
                .delete,
                try setup.path(for: conventions.routes.destroy, id: id, parameters: &parameters, instance: instance)
            )
        default:
            return (
                conventions.updateMethod,
                try setup.path(for: conventions.routes.update, id: id, parameters: &parameters, instance: instance)
            )
        }
    }

    /// The path of a to-many relationship's JSON:API endpoint, whose linkage a membership change
    /// sends: the record's own path and `/relationships/<name>`.
    func membershipPath(of owner: Model, id: ResourceID, relationship: String) throws -> APIPath {
        let base = try setup.path(for: setup.conventions.routes.show, id: id, instance: owner).encoded
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        return APIPath(verbatim: "\(trimmed)/relationships/\(relationship)")
    }

    /// Moves a list's filter keys left after its path took its own into JSON:API's `filter` family:
    /// `train_id=1` becomes `filter[train_id]=1`. Keys already in a family (`page[size]`,
    /// `filter[year.gte]`, `fields[trains]`) and the conventions' own parameters stay.
    private static func familyFilter(
        _ filter: [String: JSONValue], in parameters: inout [String: JSONValue], _ conventions: ServerConventions
    ) {
        var reserved: Set<String> = [conventions.includeParameter, conventions.searchParameter]
        if let order = conventions.orderParameter { reserved.insert(order) }
        switch conventions.paging.style {
        case .pageNumbers(let page, let size): reserved.formUnion([page, size])
        case .offsets(let limit, let offset): reserved.formUnion([limit, offset])
        case .cursor(let cursor, let size, _): reserved.formUnion([cursor, size])
        }
        for key in filter.keys where !key.contains("[") && !reserved.contains(key) {
            guard let value = parameters.removeValue(forKey: key) else { continue }
            parameters["filter[\(key)]"] = value
        }
    }

    /// A read's parameters as ``ResourceModel/customSerialize(_:for:)`` rewrites them: the
    /// MonoRail seed's dictionary "converted to JSON or URL (GET) parameters".
    private static func serialized(_ parameters: [String: JSONValue], for verb: ActionVerb) throws -> [String:
        JSONValue]
    {
        let rewritten: JSONValue
        do {
            rewritten = try Model.customSerialize(.object(parameters), for: verb)
        } catch {
            throw APIError(
                .encodingFailed, "\(Model.resourceSchema.typeName).customSerialize failed: \(error)",
                underlyingError: error)
        }
        guard case .object(let object) = rewritten else {
            throw APIError(
                .encodingFailed,
                "\(Model.resourceSchema.typeName).customSerialize(_:for: .\(verb)) returned \(rewritten.kind) for the query parameters; they need an object"
            )
        }
        return object
    }

    /// A body with the record's id under the model's primary key.
    private func adding(_ id: ResourceID, to body: JSONValue) -> JSONValue {
        guard case .object(var object) = body else { return body }
        object[setup.idKey] = id.jsonValue
        return .object(object)
    }

    /// The id an action on an existing record addresses; `nil` for a record the server has at a
    /// route with no id (a singleton resource).
    private static func id(of instance: Model, toward action: String, route: RouteTemplate) throws -> ResourceID? {
        let (id, isPersisted) = instance._$state.state.withLock { ($0.id, $0.isPersisted) }
        if let id { return id }
        guard isPersisted, !route.placeholders.contains("id") else {
            throw APIError(
                .notPersisted,
                "cannot \(action) a \(Model.resourceSchema.typeName) that has not been created on the server")
        }
        return nil
    }

    /// Where the pipeline's requests go: the model's client, through the store's one exchange.
    var exchange: Exchange { Exchange(client: setup.client, refusal: setup.sendingError, store: store) }

    /// Sends the request of an action, conditional on `validators` when a cache holds its answer.
    func send(_ prepared: Prepared, validators: CacheHit? = nil, retries: Bool = true) async throws -> APIResponse {
        let preconditions = Exchange.Preconditions(
            idempotencyKey: prepared.idempotencyKey, ifMatch: prepared.ifMatch, ifNoneMatch: validators?.etag,
            ifModifiedSince: validators?.lastModified)
        // A repository's client needs no API root of the store's.
        let exchange = prepared.action.client.map { Exchange(client: $0, store: store) } ?? exchange
        return try await exchange.send(request(for: prepared, retries: retries), preconditions)
    }

    /// The HTTP request of a prepared action: its route, query and body in the model's format, the
    /// conventions' media type, and the request options the client's stages read.
    func request(for prepared: Prepared, retries: Bool = true) -> APIRequest {
        let conventions = setup.conventions
        var headers = HTTPFields()
        if let mediaType = conventions.mediaType, setup.format == .json {
            if setup.client.configuration.defaultHeaders[.accept] == nil { headers[.accept] = mediaType }
            if prepared.body != nil, prepared.files.isEmpty { headers[.contentType] = mediaType }
        }
        var options = RequestOptions(
            deduplicates: prepared.action.sharesRequests, timeout: setup.timeout,
            operationName: name(of: prepared.action), urlTemplate: prepared.urlTemplate,
            uploadProgress: prepared.action.uploadProgress, format: setup.format,
            validationStatuses: conventions.validationStatuses)
        if !retries { options.retryPolicy = RetryPolicy.none }
        return APIRequest(
            method: prepared.method, path: prepared.path, query: prepared.parameters, headers: headers,
            body: prepared.body.map { .tree($0, files: prepared.files) },
            bodyRoot: conventions.wrapsRequestBody && prepared.body != nil ? setup.singular : nil,
            options: options)
    }

    /// The request of writes sent together as JSON:API Atomic Operations: all of them or none.
    func atomicRequest(_ operations: [JSONValue], path: String) -> APIRequest {
        let mediaType = "\(JSONAPIDocument.mediaType); ext=\"\(JSONAPIDocument.atomicExtension)\""
        return APIRequest(
            method: .post, path: APIPath(verbatim: path), headers: [.contentType: mediaType, .accept: mediaType],
            body: .tree(["atomic:operations": .array(operations)], files: FileAttachments()),
            options: RequestOptions(
                timeout: setup.timeout, operationName: "outbox.atomicOperations", format: .json,
                validationStatuses: setup.conventions.validationStatuses))
    }
}
