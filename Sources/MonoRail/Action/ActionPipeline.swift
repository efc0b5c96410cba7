import Atomics
import Foundation
import HTTPTypes
import Logging

/// Runs model actions: the one path from a model call to the server and back, and the only code
/// in the Resources layer that sends requests.
///
/// ```
/// Train.get(id: 1)                 builds a ModelAction, nothing else
///   → ActionPipeline.run
///       1. read policy             a live instance or the record cache may answer (CachePolicy)
///       2. write policy            the outbox sends a write now or keeps it     (Outbox)
///       3. request                 APIClient.send: middleware, retry, log, de-duplication
///       4. locate                  ResponseLocator: namespace, root, side-loads, errors member
///       5. decode                  RecordDecoder: the tree, or MessagePack in place
///       6. merge                   ResourceStore: all of the response or none of it
///       7. persist                 the record cache keeps each record          (RecordCache)
///       8. announce                observers and update streams, as the merge applied
///   ← ResourceResponse             value, status, header fields, links, source
/// ```
struct ActionPipeline<Model: ResourceModel> {
    let store: ResourceStore
    let setup: ModelSetup<Model>

    init(store: ResourceStore) {
        self.store = store
        self.setup = store.setup(for: Model.self)
    }

    /// An action turned into its request, with what its merge needs to know.
    struct Prepared: Sendable {
        var action: ModelAction<Model>
        var method: HTTPRequest.Method
        var path: APIPath
        var query: [String: JSONValue]
        var body: JSONValue?
        var files: FileAttachments
        /// The id the answer must carry, for actions on one existing record.
        var expectedID: ResourceID?
        /// For a create or save: the edit sequence numbers sent, which become saved.
        var sentEdits: [UInt64]?
        /// Sent as `Idempotency-Key`: a write through the outbox.
        var idempotencyKey: String?
        /// Sent as `If-Match`.
        var ifMatch: String?
    }

    // MARK: - Running

    /// Runs an action that answers with one record: get, fetch, create, save.
    ///
    /// A create or save keeps the validation errors it was refused with on the instance, and clears
    /// them once the server has taken it; a create carries out the `@Has` assignments that waited
    /// for the record's id.
    func record(_ action: ModelAction<Model>) async throws -> ResourceResponse<Model> {
        let writing: Model? =
            switch action.operation {
            case .create(let instance), .save(let instance): instance
            default: nil
            }
        guard let writing else { return try await runRecord(action) }
        do {
            let answer = try await runRecord(action)
            if answer.source == .network { writing._$state.setErrors(ValidationErrors(), of: writing) }
            // `@Has` assignments made before the record existed can point at it now.
            if case .create = action.operation { writing._$state.carryOutPendingAssignments(of: writing) }
            await store.announcer.settle()
            return answer
        } catch let error as APIError where error.code == .validationFailed {
            writing._$state.setErrors(error.errors, of: writing)
            await store.announcer.settle()
            throw error
        }
    }

    private func runRecord(_ action: ModelAction<Model>) async throws -> ResourceResponse<Model> {
        try await run(action) { response, prepared, context in
            try mergeWrite(response, prepared, context)
        } cached: { instances in
            guard let instance = instances.first else {
                throw APIError(.notCached, "the cached answer held no \(Model.resourceSchema.typeName)")
            }
            return instance
        } queued: { prepared in
            guard let target = prepared.action.target else { throw APIError(.invalidRequest, "only writes are queued") }
            return target
        }
    }

    /// Runs an action that answers with a list: get, get(where:), search.
    func list(_ action: ModelAction<Model>) async throws -> ResourceResponse<[Model]> {
        try await page(action).map(\.instances)
    }

    /// Runs a delete.
    func delete(_ action: ModelAction<Model>) async throws -> ResourceResponse<Void> {
        try await run(action) { _, prepared, _ in
            mergeDelete(prepared)
        } cached: { _ in
        } queued: { _ in
        }
    }

    /// The answer to a create, save, fetch or get: the record merged into its instance.
    func mergeWrite(_ response: APIResponse, _ prepared: Prepared, _ context: MergeContext) throws -> Model {
        if prepared.action.verb == .update, response.body.isEmpty, let target = prepared.action.target {
            // 204 No Content, or 200 with nothing: what was sent is what the server has.
            target._$state.markSaved(sent: prepared.sentEdits ?? [])
            return target
        }
        let mode: InstanceState<Model>.MergeMode = prepared.sentEdits.map { .saved(sent: $0) } ?? .read
        if case .singleton = prepared.action.operation { return try mergeSingleton(response, context) }
        return try mergeRecord(
            response, expecting: prepared.expectedID, target: prepared.action.target, mode: mode, context)
    }

    /// A delete the server took: the record leaves the identity map.
    func mergeDelete(_ prepared: Prepared) {
        guard let target = prepared.action.target else { return }
        if let id = prepared.expectedID {
            store.remove(target, id: id)
        } else {
            // A singleton resource's record, deleted at its route with no id.
            store.identityMap.withLock { map in
                if map.singleton(of: Model.self) === target { map.setSingleton(nil, of: Model.self) }
            }
        }
        let wasShown = target._$state.state.withLock { state in
            defer {
                state.isDeleted = true
                state.isDeletePending = false
            }
            return state.isDeletePending
        }
        // A delete the outbox kept was announced when it was kept.
        if !wasShown { target._$state.announce(.deleted, fields: [], of: target) }
    }

    /// An answer's way through stages 4 to 8, for a request already sent.
    func answering<Value: Sendable>(
        _ prepared: Prepared, merge: @escaping @Sendable (APIResponse, Prepared, MergeContext) throws -> Value
    ) -> Answering<Value> {
        Answering(pipeline: self, prepared: prepared, merge: merge) { _ in
            throw APIError(.notCached, "a write is not answered from the record cache")
        }
    }

    /// The stages, in order. `merge` is stages 4 to 6 for the action's kind of answer; `cached`
    /// makes the value of the instances a cached answer merged into.
    func run<Value: Sendable>(
        _ action: ModelAction<Model>,
        merge: @escaping @Sendable (APIResponse, Prepared, MergeContext) throws -> Value,
        cached: @escaping @Sendable ([Model]) throws -> Value,
        queued: (Prepared) throws -> Value
    ) async throws -> ResourceResponse<Value> {
        // 8. Announce: when the action returns, its observers have been told, wherever they are.
        do {
            let answer = try await stages(action, merge: merge, cached: cached, queued: queued)
            await store.announcer.settle()
            return answer
        } catch {
            await store.announcer.settle()
            throw error
        }
    }

    private func stages<Value: Sendable>(
        _ action: ModelAction<Model>,
        merge: @escaping @Sendable (APIResponse, Prepared, MergeContext) throws -> Value,
        cached: @escaping @Sendable ([Model]) throws -> Value,
        queued: (Prepared) throws -> Value
    ) async throws -> ResourceResponse<Value> {
        await restoreOutbox()
        var prepared = try prepare(action)
        if setup.conditionalWrites { prepared.ifMatch = await entityTag(for: prepared) }
        let answering = Answering(pipeline: self, prepared: prepared, merge: merge, cached: cached)
        // 1. Read policy.
        if action.verb.isRead { return try await answering.read(policy: action.policy ?? setup.cachePolicy) }
        // 2. Write policy.
        if let kept = try await applyWritePolicy(
            prepared, answering: { Answering(pipeline: self, prepared: $0, merge: merge, cached: cached) },
            queued: queued)
        {
            return kept
        }
        // 3. Request.
        let sent = store.stamp()
        return try await answering.received(try await send(prepared), sent: sent)
    }

    /// The first action of each model puts the outbox's kept writes of that model back on live
    /// instances, so that it sees its records as the app left them.
    private func restoreOutbox() async {
        guard !setup.outboxRestored.load(ordering: .acquiring) else { return }
        do {
            try await store.outbox.restore(Model.self, in: store)
            setup.outboxRestored.store(true, ordering: .releasing)
        } catch {
            setup.client.configuration.logger.error(
                "the outbox's kept writes could not be read: \(error); \(Model.resourceSchema.typeName)'s are not shown"
            )
        }
    }

    // MARK: - Request

    /// Works out the request of an action; sends nothing.
    func prepare(_ action: ModelAction<Model>) throws -> Prepared {
        let conventions = setup.conventions
        var query = action.parameters
        if case .list(let filter) = action.operation { query.merge(filter) { _, filter in filter } }
        if action.verb.isRead, !query.isEmpty {
            if case .page = action.operation {} else { query = try Self.serialized(query, for: action.verb) }
        }
        if !action.include.isEmpty {
            query[conventions.includeParameter] = .string(action.include.joined(separator: ","))
        }
        func prepared(
            _ method: HTTPRequest.Method, _ path: APIPath, id: ResourceID? = nil,
            body: (JSONValue, FileAttachments)? = nil,
            sent: [UInt64]? = nil
        ) -> Prepared {
            Prepared(
                action: action, method: method, path: path, query: query, body: body?.0,
                files: body?.1 ?? FileAttachments(), expectedID: id, sentEdits: sent)
        }
        switch action.operation {
        case .get(let id):
            let path = try setup.path(for: conventions.routes.show, id: id, query: &query)
            return prepared(.get, path, id: id)
        case .singleton:
            guard !conventions.routes.show.placeholders.contains("id") else {
                throw APIError(
                    .invalidRequest,
                    "\(Model.resourceSchema.typeName)'s show route \"\(conventions.routes.show)\" needs an id; a "
                        + "singleton resource's has none: conventions.routes = .singleton(\"/user.json\")")
            }
            let path = try setup.path(for: conventions.routes.show, query: &query)
            return prepared(.get, path)
        case .list:
            let path = try action.path.map(setup.path(at:)) ?? setup.path(for: conventions.routes.index, query: &query)
            return prepared(.get, path)
        case .page(let url):
            return prepared(.get, try setup.path(following: url))
        case .search(let term):
            let route = conventions.routes.search
            if !route.placeholders.contains("term") { query[conventions.searchParameter] = .string(term) }
            let path = try setup.path(for: route, term: term, query: &query)
            return prepared(.get, path)
        case .fetch(let instance):
            let id = try Self.id(of: instance, toward: "fetch", route: conventions.routes.show)
            let path = try setup.path(for: conventions.routes.show, id: id, query: &query, instance: instance)
            return prepared(.get, path, id: id)
        case .create(let instance):
            let snapshot = instance._$state.snapshot()
            if let id = snapshot.id {
                throw APIError(
                    .invalidRequest,
                    "\(Model.resourceSchema.typeName) \(id.debugText) already exists on the server; use save()")
            }
            let path = try setup.path(for: conventions.routes.create, query: &query, instance: instance)
            let body = try Model.encodeBody(snapshot.values, only: nil, setup: setup, verb: .create, store: store)
            return prepared(.post, path, body: body, sent: snapshot.edits)
        case .save(let instance):
            let snapshot = instance._$state.snapshot()
            let id = try Self.id(of: instance, toward: "save", route: conventions.routes.update)
            let path = try setup.path(for: conventions.routes.update, id: id, query: &query, instance: instance)
            let only = conventions.sendsOnlyChanges ? snapshot.edits.indices.filter { snapshot.edits[$0] != 0 } : nil
            var body = try Model.encodeBody(snapshot.values, only: only, setup: setup, verb: .update, store: store)
            if conventions.sendsIDInBody, let id { body.0 = adding(id, to: body.0) }
            return prepared(conventions.updateMethod, path, id: id, body: body, sent: snapshot.edits)
        case .delete(let instance):
            let route = conventions.routes.destroy
            let id = try Self.id(of: instance, toward: "delete", route: route)
            // A route with no `:id` for a record with one: the id goes in the body, if the server
            // family sends ids that way.
            let body = id.flatMap { id -> (JSONValue, FileAttachments)? in
                guard conventions.sendsIDInBody, !route.placeholders.contains("id") else { return nil }
                return (adding(id, to: [:]), FileAttachments())
            }
            let path = try setup.path(for: route, id: id, query: &query, instance: instance)
            return prepared(.delete, path, id: id, body: body)
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
                "\(Model.resourceSchema.typeName).customSerialize(_:for: .\(verb)) returned \(RecordDecoder<Model>.kind(of: rewritten)) for the query parameters; they need an object"
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

    static var idempotencyKeyField: HTTPField.Name? { HTTPField.Name("Idempotency-Key") }

    /// Sends the request of an action, conditional on `validators` when a cache holds its answer.
    func send(_ prepared: Prepared, validators: CacheHit? = nil, retries: Bool = true) async throws -> APIResponse {
        if let sendingError = setup.sendingError { throw sendingError }
        let conventions = setup.conventions
        var headers = HTTPFields()
        if let etag = validators?.etag { headers[.ifNoneMatch] = etag }
        if let lastModified = validators?.lastModified { headers[.ifModifiedSince] = lastModified }
        if let key = prepared.idempotencyKey, let name = Self.idempotencyKeyField {
            // A structured-field string, as the draft writes it.
            headers[name] = "\"\(key)\""
        }
        if let ifMatch = prepared.ifMatch { headers[.ifMatch] = ifMatch }
        var options = RequestOptions(
            deduplicates: prepared.action.sharesRequests, timeout: setup.timeout,
            operationName: "\(Model.resourceSchema.typeName).\(prepared.action.verb.rawValue)",
            uploadProgress: prepared.action.uploadProgress, format: setup.format,
            validationStatuses: conventions.validationStatuses)
        if !retries { options.retryPolicy = RetryPolicy.none }
        let request = APIRequest(
            method: prepared.method, path: prepared.path, query: prepared.query, headers: headers,
            body: prepared.body.map { .tree($0, files: prepared.files) },
            bodyRoot: conventions.wrapsRequestBody && prepared.body != nil ? setup.singular : nil,
            options: options)
        do {
            let response = try await setup.client.send(request)
            store.noteReachability(answered: true)
            return response
        } catch let error as APIError {
            if error.response != nil {
                store.noteReachability(answered: true)
            } else if error.isUnanswered {
                store.noteReachability(answered: false)
            }
            throw error
        }
    }

    // MARK: - Locate, decode, merge

    /// Locates, decodes and merges the one record of a response.
    func mergeRecord(
        _ response: APIResponse, expecting id: ResourceID?, target: Model?, mode: InstanceState<Model>.MergeMode,
        _ context: MergeContext
    ) throws -> Model {
        do {
            let reads: Bool = if case .read = mode { true } else { false }
            return try Self.readingAgainIfExpired { probing in
                let coder = FieldCoder(options: setup.coding)
                let decoder = setup.decoder(
                    coder: coder, store: store, keepsWire: context.keepsWire, probing: probing && reads)
                let located: ModelSetup<Model>.Located<RecordPatch<Model>>
                if let text = setup.textRecord(in: response, decoder: decoder) {
                    located = text
                } else {
                    let tree = try setup.record(in: response)
                    // The answer to a create or save may leave out the id: it describes what was sent; so
                    // may the answer about a record the server keeps with none.
                    let answersWrite: Bool = if case .saved = mode { target != nil } else { false }
                    let patch = try decoder.decode(
                        tree.main, at: RecordLocation(base: tree.path),
                        allowsMissingID: answersWrite || (target != nil && id == nil))
                    located = .init(main: patch, path: tree.path, container: tree.container, rootKey: tree.rootKey)
                }
                let patch = located.main
                let sideloaded = try setup.sideloaded(located, store: store, keepsWire: context.keepsWire)
                if let id, let answered = patch.id, answered.description != id.description {
                    throw APIError(
                        .inconsistentResponse,
                        "asked for \(Model.resourceSchema.typeName) \(id.debugText), the server answered with "
                            + answered.debugText)
                }
                // An instance built from JSON (`Model(json:)`) while the store holds a live copy of
                // its record: the answer is merged into the live copy, the one instance of the
                // record, and the built one takes the server's state from it.
                let live = target.flatMap { liveCopy(of: $0, id: patch.id ?? id) }
                let (merged, side) = try store.mergeKeepingSideloads(
                    [patch], sideloaded: sideloaded, target: live == nil ? target : nil,
                    mode: live == nil ? mode : .read, coder: coder, fetched: context.fetched)
                if !side.isEmpty { Model.resourceSchema.adoptRelated(merged) }
                guard let instance = merged.first else {
                    throw APIError(.inconsistentResponse, "the response held no \(Model.resourceSchema.typeName)")
                }
                context.keep([patch], sideloaded: sideloaded)
                if let live, let target {
                    target._$state.take(serverStateOf: live, into: target, mode: mode)
                    return target
                }
                return instance
            }
        } catch {
            throw setup.attach(error, to: response)
        }
    }

    /// The store's instance of the record `target` describes, when that is another instance: one
    /// built from JSON while the store held its record.
    private func liveCopy(of target: Model, id: ResourceID?) -> Model? {
        guard let id, let live = store.instance(of: Model.self, id: id), live !== target else { return nil }
        return live
    }

    /// Locates, decodes and merges the record of a singleton resource: into the instance of that
    /// id when the record has one, else into the model's one singleton instance.
    func mergeSingleton(_ response: APIResponse, _ context: MergeContext) throws -> Model {
        do {
            let located = try setup.record(in: response)
            let coder = FieldCoder(options: setup.coding)
            let patch = try setup.decoder(coder: coder, store: store, keepsWire: context.keepsWire).decode(
                located.main, at: RecordLocation(base: located.path), allowsMissingID: true)
            let sideloaded = try setup.sideloaded(located, store: store, keepsWire: context.keepsWire)
            let target = patch.id == nil ? store.identityMap.withLock { $0.makeSingleton(of: Model.self) } : nil
            let (merged, side) = try store.mergeKeepingSideloads(
                [patch], sideloaded: sideloaded, target: target, mode: .read, coder: coder,
                fetched: context.fetched)
            if !side.isEmpty { Model.resourceSchema.adoptRelated(merged) }
            guard let instance = merged.first else {
                throw APIError(.inconsistentResponse, "the response held no \(Model.resourceSchema.typeName)")
            }
            store.identityMap.withLock { $0.setSingleton(instance, of: Model.self) }
            context.keep([patch], sideloaded: sideloaded)
            return instance
        } catch {
            throw setup.attach(error, to: response)
        }
    }

    /// Locates, decodes and merges the records of a list response.
    func mergeList(_ response: APIResponse, _ context: MergeContext) throws -> [Model] {
        try mergeListing(response, context).instances
    }

    /// ``mergeList(_:_:)``, also returning the object around the list, where a paged list's envelope
    /// tells its total and its next page.
    func mergeListing(_ response: APIResponse, _ context: MergeContext) throws
        -> (instances: [Model], container: [String: JSONValue]?)
    {
        do {
            return try Self.readingAgainIfExpired { probing in
                let coder = FieldCoder(options: setup.coding)
                let decoder = setup.decoder(coder: coder, store: store, keepsWire: context.keepsWire, probing: probing)
                let located: ModelSetup<Model>.Located<[RecordPatch<Model>]>
                if let packed = setup.packedRecords(in: response, decoder: decoder) {
                    located = packed
                } else if let text = setup.textRecords(in: response, decoder: decoder) {
                    located = text
                } else {
                    let list = try setup.records(in: response)
                    var patches: [RecordPatch<Model>] = []
                    patches.reserveCapacity(list.main.count)
                    for index in 0..<list.main.count {
                        let location = RecordLocation(base: list.path, index: index)
                        if let patch = try decoder.decodeUnlessDropped(list.main[index], at: location) {
                            patches.append(patch)
                        }
                    }
                    try RecordPatch.requireDistinctIDs(patches, at: list.path)
                    located = .init(main: patches, path: list.path, container: list.container, rootKey: list.rootKey)
                }
                // The readers in place checked that no record appears twice as they read them.
                let sideloaded = try setup.sideloaded(located, store: store, keepsWire: context.keepsWire)
                let (merged, side) = try store.mergeKeepingSideloads(
                    located.main, sideloaded: sideloaded, target: nil, mode: .read, coder: coder,
                    fetched: context.fetched)
                if !side.isEmpty { Model.resourceSchema.adoptRelated(merged) }
                context.keep(located.main, sideloaded: sideloaded)
                return (merged, located.container)
            }
        } catch {
            throw setup.attach(error, to: response)
        }
    }

    /// Runs `body`, a read and merge of a response, and once more without looking for records
    /// unchanged when one found so no longer was by the time of the merge (another merge changed its
    /// instance meanwhile): ``Merger/ProbeExpired`` is thrown before anything is merged.
    static func readingAgainIfExpired<Result>(_ body: (_ probing: Bool) throws -> Result) rethrows -> Result {
        do {
            return try body(true)
        } catch is Merger.ProbeExpired {
            return try body(false)
        }
    }
}
