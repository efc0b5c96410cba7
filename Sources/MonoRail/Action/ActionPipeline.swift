import Atomics
import Foundation
import HTTPTypes
import Logging
import Tracing

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
        /// The request's query parameters.
        var parameters: [String: JSONValue]
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
        /// The route the path came from, as OpenTelemetry's `url.template`: names the request's span.
        var urlTemplate: String?
        /// For a create the outbox kept: the order of the stamp it was kept at (`Int64.min` for a
        /// write an earlier launch kept), before which the record could not have been in the store. A
        /// direct create's is the stamp it was sent at.
        var createdSince: Int64?

        init(
            _ action: ModelAction<Model>, _ method: HTTPRequest.Method, _ path: APIPath,
            parameters: [String: JSONValue],
            id: ResourceID? = nil, body: (JSONValue, FileAttachments)? = nil, sent: [UInt64]? = nil
        ) {
            self.action = action
            self.method = method
            self.path = path
            self.parameters = parameters
            self.body = body?.0
            self.files = body?.1 ?? FileAttachments()
            self.expectedID = id
            self.sentEdits = sent
        }
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
            if store.signOutFence.excludes(context.fetched) { throw ResourceStore.fencedOut }
            // 204 No Content, or 200 with nothing: what was sent is what the server has.
            target._$state.markSaved(sent: prepared.sentEdits ?? [])
            return target
        }
        let mode: InstanceState<Model>.MergeMode = prepared.sentEdits.map { .saved(sent: $0) } ?? .read
        if case .singleton = prepared.action.operation { return try mergeSingleton(response, context) }
        // A create an earlier launch kept: its instance is the outbox's, made again from the kept
        // write, which the app has not been handed; an instance a read or a push brought in since the
        // launch is the one the app holds. That one keeps the record's place and the outbox's takes the
        // server's state from it, as a copy built from JSON does.
        let isFromEarlierLaunch = prepared.createdSince == Int64.min
        let createdSince =
            prepared.action.verb == .create && !isFromEarlierLaunch
            ? prepared.createdSince ?? context.fetched.order : nil
        return try mergeRecord(
            response, expecting: prepared.expectedID, target: prepared.action.target, mode: mode,
            createdSince: createdSince, answersCreate: prepared.action.verb == .create, context)
    }

    /// A delete the server took: the record leaves the identity map.
    func mergeDelete(_ prepared: Prepared) {
        guard let target = prepared.action.target else { return }
        markDeleted(target, id: prepared.expectedID)
    }

    /// Takes a deleted record's instance out of the identity map and marks it deleted; `id` is `nil`
    /// for a singleton resource's record.
    func markDeleted(_ target: Model, id: ResourceID?) {
        if let id {
            store.noteGone(Model.self, ids: [id])
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
        try await setup.client.telemetry.withSpan(name(of: action), attributes: describe(action)) { span in
            // 8. Announce: when the action returns, its observers have been told, wherever they are.
            do {
                let answer = try await stages(action, span: span, merge: merge, cached: cached, queued: queued)
                await store.announcer.settle()
                if let span {
                    span.attributes["monorail.response.source"] = "\(answer.source)"
                    span.addEvent("announced")
                }
                return answer
            } catch {
                await store.announcer.settle()
                throw error
            }
        }
    }

    /// An action span's attributes: the model, the call, the record.
    private func describe(_ action: ModelAction<Model>) -> SpanAttributes {
        var attributes = SpanAttributes()
        attributes["monorail.model"] = setup.typeName
        attributes["monorail.action"] = action.operationName
        switch action.operation {
        case .get(let id): attributes["monorail.record.id"] = id.description
        default: if let id = action.target?.id { attributes["monorail.record.id"] = id.description }
        }
        if action.verb.isRead { attributes["monorail.cache.policy"] = (action.policy ?? setup.cachePolicy).name }
        return attributes
    }

    private func stages<Value: Sendable>(
        _ action: ModelAction<Model>,
        span: (any Span)?,
        merge: @escaping @Sendable (APIResponse, Prepared, MergeContext) throws -> Value,
        cached: @escaping @Sendable ([Model]) throws -> Value,
        queued: (Prepared) throws -> Value
    ) async throws -> ResourceResponse<Value> {
        if let configurationError = setup.configurationError { throw configurationError }
        await restoreOutbox()
        var prepared = try prepare(action)
        if setup.conditionalWrites { prepared.ifMatch = await entityTag(for: prepared) }
        let answering = Answering(pipeline: self, prepared: prepared, merge: merge, cached: cached, span: span)
        // 1. Read policy.
        if action.verb.isRead { return try await answering.read(policy: action.policy ?? setup.cachePolicy) }
        // 2. Write policy.
        if let kept = try await applyWritePolicy(
            prepared, answering: { Answering(pipeline: self, prepared: $0, merge: merge, cached: cached, span: span) },
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

    // MARK: - Locate, decode, merge

    /// Locates, decodes and merges the one record of a response.
    ///
    /// - Parameter createdSince: For the answer to a create: the order since which the record can
    ///   have come to the store on its own (a push, a read) ahead of the answer. A live instance of the
    ///   answer's id that came since gives its place to the app's instance; one that was there before
    ///   is another record, and the answer is refused.
    /// - Parameter answersCreate: Whether the response answers a create: it describes the record as
    ///   the create made it, older than anything the store heard of the record since.
    func mergeRecord(
        _ response: APIResponse, expecting id: ResourceID?, target: Model?, mode: InstanceState<Model>.MergeMode,
        createdSince: Int64? = nil, answersCreate: Bool = false, _ context: MergeContext
    ) throws -> Model {
        do {
            let reads: Bool = if case .read = mode { true } else { false }
            // The answer to a create or save may leave out the id: it describes what was sent; so may
            // the answer about a record the server keeps with none.
            let answersWrite: Bool = if case .saved = mode { target != nil } else { false }
            return try Self.readingAgainIfExpired { probing in
                try setup.coders.withCoder { coder in
                    let decoder = setup.decoder(
                        coder: coder, store: store, keepsWire: context.keepsWire, probing: probing && reads,
                        readsDocuments: true)
                    // 4–5. Locate and decode.
                    let located = try locateRecord(
                        in: response, decoder: decoder, allowsMissingID: answersWrite || (target != nil && id == nil))
                    let patch = located.main
                    let sideloaded = try setup.sideloaded(located, store: store, keepsWire: context.keepsWire)
                    if let id, let answered = patch.id, answered.description != id.description {
                        throw APIError(
                            .inconsistentResponse,
                            "asked for \(Model.resourceSchema.typeName) \(id.debugText), the server answered with "
                                + answered.debugText)
                    }
                    // 6. Merge.
                    let instance = try merge(
                        patch, sideloaded: sideloaded, into: target, id: id, mode: mode, createdSince: createdSince,
                        answersCreate: answersCreate, coder: coder, context, document: located.document)
                    context.keep([patch], of: setup.singular, sideloaded: sideloaded)
                    return instance
                }
            }
        } catch {
            throw setup.attach(error, to: response)
        }
    }

    /// The one record of a response, found by the locator and decoded: in place when it can be,
    /// else from its tree.
    private func locateRecord(in response: APIResponse, decoder: RecordDecoder<Model>, allowsMissingID: Bool) throws
        -> ModelSetup<Model>.Located<RecordPatch<Model>>
    {
        if let inPlace = setup.inPlaceRecord(in: response, decoder: decoder) { return inPlace }
        let tree = try setup.record(in: response)
        let patch = try decoder.decode(
            tree.main, at: RecordLocation(base: tree.path), allowsMissingID: allowsMissingID)
        var located = ModelSetup<Model>.Located(
            main: patch, path: tree.path, container: tree.container, rootKey: tree.rootKey)
        located.document = tree.document
        return located
    }

    /// Merges a response's one record and the records beside it, into `target` when the action has
    /// one. An instance built from JSON (`Model(json:)`) while the store holds a live copy of its
    /// record: the answer is merged into the live copy, the one instance of the record, and the built
    /// one takes the server's state from it.
    private func merge(
        _ patch: RecordPatch<Model>, sideloaded: [any RelatedPatch], into target: Model?, id: ResourceID?,
        mode: InstanceState<Model>.MergeMode, createdSince: Int64?, answersCreate: Bool, coder: FieldCoder,
        _ context: MergeContext, document: JSONAPIDocument?
    ) throws -> Model {
        // A create's answer goes into the app's instance, which takes the record's place.
        let live = createdSince == nil ? target.flatMap { liveCopy(of: $0, id: patch.id ?? id) } : nil
        let (merged, side) = try store.mergeKeepingSideloads(
            [patch], sideloaded: sideloaded, target: live == nil ? target : nil, mode: live == nil ? mode : .read,
            coder: coder, fetched: context.fetched, adoptingSince: createdSince, answersCreate: answersCreate)
        // The related instances live only in `side` until the owners keep them: held to the end.
        withExtendedLifetime(side) {
            if let document { setup.adoptLinkage(of: document, store: store) }
            if !side.isEmpty || document != nil { Model.resourceSchema.adoptRelated(merged, in: store) }
        }
        guard let instance = merged.first else {
            if patch.isGone, let id = patch.id {
                throw APIError(
                    .inconsistentResponse,
                    "\(Model.resourceSchema.typeName) \(id.debugText) was deleted on the server after this request was "
                        + "sent (the store heard so since); its older answer was not merged")
            }
            throw APIError(.inconsistentResponse, "the response held no \(Model.resourceSchema.typeName)")
        }
        if let live, let target {
            target._$state.take(serverStateOf: live, into: target, mode: mode)
            return target
        }
        return instance
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
            let patch = try setup.decoder(
                coder: coder, store: store, keepsWire: context.keepsWire, readsDocuments: true
            ).decode(
                located.main, at: RecordLocation(base: located.path), allowsMissingID: true)
            let sideloaded = try setup.sideloaded(located, store: store, keepsWire: context.keepsWire)
            let target = patch.id == nil ? store.identityMap.withLock { $0.makeSingleton(of: Model.self) } : nil
            let (merged, side) = try store.mergeKeepingSideloads(
                [patch], sideloaded: sideloaded, target: target, mode: .read, coder: coder,
                fetched: context.fetched)
            withExtendedLifetime(side) {
                withExtendedLifetime(side) {
                    if let document = located.document { setup.adoptLinkage(of: document, store: store) }
                    if !side.isEmpty || located.document != nil { Model.resourceSchema.adoptRelated(merged, in: store) }
                }
            }
            guard let instance = merged.first else {
                throw APIError(.inconsistentResponse, "the response held no \(Model.resourceSchema.typeName)")
            }
            store.identityMap.withLock { $0.setSingleton(instance, of: Model.self) }
            context.keep([patch], of: setup.singular, sideloaded: sideloaded)
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
                try setup.coders.withCoder { coder in
                    let decoder = setup.decoder(
                        coder: coder, store: store, keepsWire: context.keepsWire, probing: probing, readsDocuments: true
                    )
                    let located: ModelSetup<Model>.Located<[RecordPatch<Model>]>
                    if let inPlace = setup.inPlaceRecords(in: response, decoder: decoder) {
                        located = inPlace
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
                        located = .init(
                            main: patches, path: list.path, container: list.container, rootKey: list.rootKey,
                            document: list.document)
                    }
                    let sideloaded = try setup.sideloaded(located, store: store, keepsWire: context.keepsWire)
                    let (merged, side) = try store.mergeKeepingSideloads(
                        located.main, sideloaded: sideloaded, target: nil, mode: .read, coder: coder,
                        fetched: context.fetched)
                    withExtendedLifetime(side) {
                        if let document = located.document { setup.adoptLinkage(of: document, store: store) }
                        if !side.isEmpty || located.document != nil {
                            Model.resourceSchema.adoptRelated(merged, in: store)
                        }
                    }
                    context.keep(located.main, of: setup.singular, sideloaded: sideloaded)
                    return (merged, located.container)
                }
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
