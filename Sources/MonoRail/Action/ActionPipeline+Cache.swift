import Atomics
import Foundation
import HTTPTypes
import Logging
import Tracing

// Stages 1 (read policy) and 7 (persist): where the record cache plugs into the pipeline.

/// What a merge hands the persist stage: the records of the answer as they came, which were the
/// main ones, and which came beside them.
final class MergeContext {
    /// When the request was sent.
    let fetched: FetchStamp
    /// Whether records keep their form as received, for the record cache.
    let keepsWire: Bool
    /// Whether the record cache takes JSON records as they came (``RecordCache/acceptsJSON``).
    let acceptsJSON: Bool
    private(set) var records: [StoredRecord] = []
    /// The ids of the main records, in response order.
    private(set) var ids: [String] = []
    /// The side-loaded records.
    private(set) var related: [RecordKey] = []

    init(fetched: FetchStamp, keepsWire: Bool = false, acceptsJSON: Bool = false) {
        self.fetched = fetched
        self.keepsWire = keepsWire
        self.acceptsJSON = acceptsJSON
    }

    /// Notes the records of a merged answer, embedded ones included, each under its own key.
    func keep<Model: ResourceModel>(_ patches: [RecordPatch<Model>], of model: String, sideloaded: [any RelatedPatch]) {
        guard keepsWire else { return }
        records.reserveCapacity(patches.count)
        for patch in patches where !patch.isGone {
            if let id = patch.id { ids.append(id.description) }
            patch.collect(into: &records, model: model, fetched: fetched, acceptingJSON: acceptsJSON)
        }
        for side in sideloaded {
            side.collect(into: &records, fetched: fetched, acceptingJSON: acceptsJSON)
            related += side.keys
        }
    }
}

/// What the record cache holds for a read: stored records, or for a read by id the live instance.
struct CacheHit: Sendable {
    /// The main records, in the order of the answer they came in.
    var records: [StoredRecord]
    var related: [StoredRecord] = []
    var fetched: FetchStamp
    var etag: String?
    var lastModified: String?
    /// The stored query that answered; `nil` when the record itself did.
    var query: QueryKey?
    /// The live instance that answers a read by id: the newest state the store merged, so nothing
    /// need be read back or decoded.
    var instance: (any ResourceModel)?
    /// The instance's record.
    var instanceKey: RecordKey?

    var keys: [RecordKey] { records.map(\.key) + related.map(\.key) + (instanceKey.map { [$0] } ?? []) }
}

extension ActionPipeline.Prepared {
    /// The read's key in a record cache: its path and parameters. `nil` for reads a stored query does
    /// not answer: a singleton resource's record and a ``ResourceModel/fetch()``.
    var queryKey: QueryKey? {
        switch action.operation {
        case .get, .list, .search, .page:
            let parameters =
                parameters.isEmpty
                ? ""
                : "?" + String(decoding: JSONWriter.serialize(.object(parameters), sortedKeys: true), as: UTF8.self)
            return QueryKey(model: Model.resourceName, key: path.encoded + parameters)
        default:
            return nil
        }
    }

    /// The id of a read of one record by id with nothing else asked, which the record itself answers.
    var recordReadID: ResourceID? {
        switch action.operation {
        case .get(let id) where parameters.isEmpty: id
        case .fetch: expectedID
        default: nil
        }
    }
}

extension ActionPipeline {
    /// One action's way through the read policy, the request, the merge and the persist stage.
    struct Answering<Value: Sendable>: Sendable {
        let pipeline: ActionPipeline
        let prepared: Prepared
        let merge: @Sendable (APIResponse, Prepared, MergeContext) throws -> Value
        let cached: @Sendable ([Model]) throws -> Value
        /// The action's span, when a tracer records: the stages add their events to it.
        var span: (any Span)? = nil

        var setup: ModelSetup<Model> { pipeline.setup }

        // MARK: 1. Read policy

        /// Answers a read as `policy` says, and counts where the answer came from.
        func read(policy: CachePolicy) async throws -> ResourceResponse<Value> {
            let answer = try await answer(policy: policy)
            let telemetry = setup.client.telemetry
            if telemetry.metricsFactory != nil {
                telemetry.count(
                    "monorail.cache.answers",
                    [("monorail.model", setup.typeName), ("policy", policy.name), ("source", "\(answer.source)")])
            }
            if let span {
                switch answer.source {
                case .cache:
                    let age = answer.age.map {
                        Double($0.components.seconds) + Double($0.components.attoseconds) * 1e-18
                    }
                    span.addEvent(
                        SpanEvent(name: "cache.answered", attributes: ["monorail.cache.age_s": .double(age ?? 0)]))
                case .revalidated: span.addEvent("cache.revalidated")
                default: if policy.readsCache { span.addEvent("cache.missed") }
                }
            }
            return answer
        }

        private func answer(policy: CachePolicy) async throws -> ResourceResponse<Value> {
            guard policy.readsCache else { return try await network(validators: nil) }
            guard let storage = setup.storage else {
                if policy == .cacheOnly {
                    throw APIError(
                        .notCached, "\(description): the store keeps no records (configuration.storage is nil)")
                }
                return try await network(validators: nil)
            }
            let hit: CacheHit?
            do {
                hit = try await lookup(in: storage)
            } catch {
                if policy == .cacheOnly { throw error }
                warn("the record cache could not be read", error)
                hit = nil
            }
            switch policy.kind {
            case .networkOnly:
                return try await network(validators: nil)
            case .cacheOnly:
                guard let hit else {
                    throw APIError(.notCached, "the record cache holds no answer to \(description)")
                }
                return try answer(hit)
            case .cacheFirst(let maxAge):
                if let hit, maxAge.map({ age(of: hit) <= $0 }) ?? true, let answer = await answerOrForget(hit) {
                    return answer
                }
                return try await network(validators: hit)
            case .staleWhileRevalidate:
                guard let hit, var answer = await answerOrForget(hit) else {
                    return try await network(validators: hit)
                }
                answer.revalidation = Task {
                    do {
                        _ = try await network(validators: hit)
                    } catch {
                        // Nobody may await the task: the failure is logged as well as thrown.
                        warn("the background revalidation failed; the cached value stays", error)
                        throw error
                    }
                }
                return answer
            case .networkFirst:
                guard let hit else { return try await network(validators: nil) }
                return try await networkOrCache(hit)
            }
        }

        /// ``CachePolicy/networkFirst`` with a cached answer: one attempt at the network, no
        /// retries, for at most the offline deadline; then the cache. An attempt still running at the
        /// deadline goes on as the answer's revalidation.
        private func networkOrCache(_ hit: CacheHit) async throws -> ResourceResponse<Value> {
            let (outcome, attempt) = await FirstOutcome.attempt(
                within: setup.offlineDeadline, clock: setup.client.configuration.clock
            ) {
                try await network(validators: hit, retries: false)
            }
            switch outcome {
            case .answered(.success(let response)):
                return response
            case .answered(.failure(let error as APIError)) where error.isTransient || error.code == .transport:
                guard let answer = await answerOrForget(hit) else { throw error }
                return answer
            case .answered(.failure(let error)):
                throw error
            case .late:
                pipeline.store.noteReachability(answered: false)
                guard var answer = await answerOrForget(hit) else { return try await attempt.value }
                answer.revalidation = Task {
                    try await withTaskCancellationHandler {
                        _ = try await attempt.value
                    } onCancel: {
                        attempt.cancel()
                    }
                }
                return answer
            }
        }

        /// The cached records of the read, or `nil` when the cache lacks one of them or they are
        /// older than the model's time to live.
        private func lookup(in storage: any RecordCache) async throws -> CacheHit? {
            let model = setup.singular
            if let id = prepared.recordReadID {
                let key = RecordKey(model: model, id: id)
                // Memory before storage: a live instance holds the newest state this store merged.
                if let live = pipeline.store.instance(of: Model.self, id: id), let fetched = live._$state.fetched {
                    guard isFresh(fetched.date) else { return nil }
                    return CacheHit(records: [], fetched: fetched, instance: live, instanceKey: key)
                }
                guard let record = try await storage.records([key])[key] else { return nil }
                guard isFresh(record.fetchedAt) else {
                    try await storage.remove([key])
                    return nil
                }
                return CacheHit(
                    records: [record], fetched: record.fetched, etag: record.etag,
                    lastModified: record.lastModified)
            }
            guard let queryKey = prepared.queryKey, let query = try await storage.query(queryKey),
                isFresh(query.fetchedAt)
            else { return nil }
            let keys = query.ids.map { RecordKey(model: model, id: $0) }
            let found = try await storage.records(inOrderOf: query.related.isEmpty ? keys : keys + query.related)
            // A query with a record no longer kept is not answered: a partial list would pass for whole.
            let records = found.prefix(keys.count).compactMap { $0 }
            let related = found.dropFirst(keys.count).compactMap { $0 }
            guard records.count == keys.count, related.count == query.related.count else { return nil }
            return CacheHit(
                records: records, related: related, fetched: query.fetched, etag: query.etag,
                lastModified: query.lastModified, query: queryKey)
        }

        private func isFresh(_ fetchedAt: Date) -> Bool {
            guard let timeToLive = setup.cacheTimeToLive else { return true }
            return pipeline.store.now().timeIntervalSince(fetchedAt) <= timeToLive
        }

        private func age(of hit: CacheHit) -> Duration {
            .seconds(max(0, pipeline.store.now().timeIntervalSince(hit.fetched.date)))
        }

        /// The value of cached records, merged.
        func answer(_ hit: CacheHit) throws -> ResourceResponse<Value> {
            var response = ResourceResponse(
                value: try cached(try pipeline.mergeStored(hit, confirmed: nil)), status: .ok, source: .cache)
            response.fetched = hit.fetched
            response.age = age(of: hit)
            return response
        }

        /// ``answer(_:)``, or `nil` after forgetting the records when one cannot be read back: the
        /// network answers instead.
        private func answerOrForget(_ hit: CacheHit) async -> ResourceResponse<Value>? {
            do {
                return try answer(hit)
            } catch {
                warn("a cached answer could not be read back; it is dropped", error)
                try? await setup.storage?.remove(hit.keys)
                return nil
            }
        }

        // MARK: 3–8. Request, merge, persist

        /// Sends the request, conditional on the cached answer's validators when there is one; with
        /// the configured retries, or with none.
        func network(validators hit: CacheHit?, retries: Bool = true) async throws -> ResourceResponse<Value> {
            var hit = hit
            // A live instance answered the lookup; its record's validators are in storage.
            if let key = hit?.instanceKey, let record = try? await setup.storage?.records([key])[key] {
                hit?.etag = record.etag
                hit?.lastModified = record.lastModified
            }
            let sent = pipeline.store.stamp()
            let response = try await pipeline.send(prepared, validators: hit, retries: retries)
            return try await received(response, sent: sent, validated: hit)
        }

        /// Merges and keeps what the server answered a request sent at `sent`.
        func received(_ response: APIResponse, sent: FetchStamp, validated hit: CacheHit? = nil) async throws
            -> ResourceResponse<Value>
        {
            if response.response.status == .notModified {
                guard let hit else {
                    throw setup.attach(
                        APIError(
                            .inconsistentResponse,
                            "the server answered 304 Not Modified to a request without validators"),
                        to: response)
                }
                let value: Value
                do {
                    value = try cached(try pipeline.mergeStored(hit, confirmed: sent))
                } catch {
                    warn("a cached answer the server confirmed could not be read back; asking again", error)
                    try? await setup.storage?.remove(hit.keys)
                    return try await network(validators: nil)
                }
                do {
                    try await setup.storage?.refresh(hit.keys, query: hit.query, fetched: sent)
                } catch {
                    warn("the record cache could not note the server's confirmation", error)
                }
                return ResourceResponse(value, of: response, source: .revalidated, fetched: sent)
            }
            pipeline.store.outboxIfMade?.noteReachable()
            let context = MergeContext(
                fetched: sent, keepsWire: setup.storage != nil, acceptsJSON: setup.storage?.acceptsJSON ?? false)
            let value: Value
            do {
                value = try merge(response, prepared, context)
            } catch let error as APIError {
                countDecodeFailure(error)
                throw error
            }
            span?.addEvent("merged")
            // Read first: a store written on every answer would bounce its cache line between cores.
            if !pipeline.store.hasMergedAnswers.load(ordering: .relaxed) {
                pipeline.store.hasMergedAnswers.store(true, ordering: .relaxed)
            }
            if setup.client.telemetry.metricsFactory != nil {
                let size = pipeline.store.identityMap.withLock { $0.entryCount }
                setup.client.telemetry.set("monorail.identity_map.size", [], to: Double(size))
            }
            // Unless a sign-out came meanwhile: then nothing of the answer is kept.
            guard await pipeline.store.signOutFence.keeping(sent, { await persist(context, response) }) else {
                throw ResourceStore.fencedOut
            }
            span?.addEvent("persisted")
            return ResourceResponse(value, of: response, source: .network, fetched: sent)
        }

        /// A response that could not be read: counted as `monorail.decode.failures` by its code.
        private func countDecodeFailure(_ error: APIError) {
            let telemetry = setup.client.telemetry
            guard telemetry.metricsFactory != nil,
                [.decodingFailed, .invalidResponse, .inconsistentResponse].contains(error.code)
            else { return }
            telemetry.count(
                "monorail.decode.failures",
                [("monorail.model", setup.typeName), ("error.type", error.code.description)])
        }

        /// 7. Persist: gives the record cache what the server answered. The records merged and the
        /// server answered, so a cache that cannot keep them is logged, not turned into a failure of
        /// an action that succeeded.
        private func persist(_ context: MergeContext, _ response: APIResponse) async {
            guard let storage = setup.storage else { return }
            let model = setup.singular
            var records = context.records
            var query: StoredQuery?
            let etag = response.response.headerFields[.eTag]
            let lastModified = response.response.headerFields[.lastModified]
            do {
                switch prepared.action.operation {
                case .delete:
                    if let id = prepared.expectedID {
                        try await storage.forgetDeleted([RecordKey(model: model, id: id)])
                    }
                    return
                case .save where response.body.isEmpty:
                    // The server took the edits without saying what it now has: the copy is stale.
                    if let id = prepared.expectedID { try await storage.remove([RecordKey(model: model, id: id)]) }
                    return
                default:
                    break
                }
                try await keepHeard(in: &records, context, storage: storage)
                if let id = prepared.recordReadID ?? writtenID(context) {
                    // The record's own answer: its validators are the record's. The entity tag of a
                    // write's answer is that of the record's new state (RFC 9110 §8.8.3), for the next
                    // `If-Match`.
                    let key = RecordKey(model: model, id: id)
                    if let index = records.firstIndex(where: { $0.key == key }) {
                        records[index].etag = etag
                        records[index].lastModified = lastModified
                    }
                } else if let key = prepared.queryKey {
                    query = StoredQuery(
                        key: key, ids: context.ids, related: context.related, fetchedAt: context.fetched.date,
                        order: context.fetched.order, etag: etag, lastModified: lastModified)
                }
                guard !records.isEmpty || query != nil else { return }
                try await storage.write(records, query: query)
            } catch {
                warn("the record cache could not keep the answer", error)
            }
        }

        /// What the record cache heard of the answer's records that this answer does not undo, and
        /// that their instances take where they hold older.
        ///
        /// A create's answer describes the record as the create made it, however late it comes (a
        /// resend's is the server's replay of the first attempt's answer), so a copy the cache took
        /// since the create was kept or sent was written after: the answer does not replace it.
        ///
        /// An answer overtaken by something the store merged since its request was sent (a push, a
        /// later request's answer): the cache kept the newer state of a record it names, but where
        /// no instance held that state any more the answer made one of the older. The cache never
        /// replaces a record with an older one, so its copy, where newer than the request, is merged
        /// into that instance with its own stamp.
        private func keepHeard(
            in records: inout [StoredRecord], _ context: MergeContext, storage: any RecordCache
        ) async throws {
            let model = setup.singular
            let created =
                prepared.action.verb == .create ? writtenID(context).map { RecordKey(model: model, id: $0) } : nil
            // One atomic load: an answer nothing overtook, the common case, looks nothing up.
            let overtaken = pipeline.store.newestMerged.load(ordering: .relaxed) > context.fetched.order
            let main = overtaken ? context.ids.map { RecordKey(model: model, id: $0) } : []
            let related = overtaken ? context.related : []
            guard created != nil || !main.isEmpty || !related.isEmpty else { return }
            let stored = try await storage.records((created.map { [$0] } ?? []) + main + related)
            if let created, let held = stored[created],
                // A copy from before the create was sent is of a record the server made again (an upsert).
                held.order >= prepared.createdSince ?? context.fetched.order
            {
                // Dated before a live instance's state by the merge: that instance's state went with it.
                let wasDated = records.first { $0.key == created }.map { $0.order < context.fetched.order } ?? false
                records.removeAll { $0.key == created }
                if !wasDated {
                    _ = try pipeline.mergeStored(
                        CacheHit(records: [held], fetched: held.fetched), confirmed: context.fetched)
                }
            }
            func newer(_ key: RecordKey) -> StoredRecord? {
                guard key != created, let held = stored[key], held.order > context.fetched.order else { return nil }
                return held
            }
            let heard = CacheHit(
                records: main.compactMap(newer), related: related.compactMap(newer), fetched: context.fetched)
            guard !heard.records.isEmpty || !heard.related.isEmpty else { return }
            _ = try pipeline.mergeStored(heard, confirmed: nil)
        }

        /// The record a create or save answered with.
        private func writtenID(_ context: MergeContext) -> ResourceID? {
            guard prepared.action.verb == .create || prepared.action.verb == .update else { return nil }
            return prepared.expectedID ?? context.ids.first.map { ResourceID.string($0) }
        }

        private var description: String {
            "\(Model.resourceSchema.typeName).\(prepared.action.verb.rawValue) \(prepared.queryKey?.key ?? prepared.path.encoded)"
        }

        private func warn(_ message: String, _ error: any Error) {
            setup.client.configuration.logger.warning("\(message) (\(description)): \(error)")
        }
    }

    /// Decodes cached records, and the related records stored with them, and merges them as one
    /// answer. Each record keeps the time it was fetched, unless the server just confirmed them all.
    func mergeStored(_ hit: CacheHit, confirmed: FetchStamp?) throws -> [Model] {
        if let live = hit.instance as? Model {
            if let confirmed { live._$state.confirm(fetched: confirmed) }
            return [live]
        }
        let coder = FieldCoder(options: setup.coding)
        let live = confirmed == nil ? liveAtLeastAsNew(hit.records) : [:]
        let patches = try setup.decode(
            stored: hit.records, skipping: Set(live.keys), confirmed: confirmed,
            with: setup.decoder(coder: coder, store: store))
        try RecordPatch.requireDistinctIDs(patches, at: "the cache")
        var sideloaded: [any RelatedPatch] = []
        for (model, records) in Dictionary(grouping: hit.related, by: \.key.model) {
            guard let loading = setup.sideLoads.first(where: { $0.loading.model() == model })?.loading else {
                throw APIError(
                    .notCached,
                    "the cached answer holds \(model) records, which \(Model.resourceSchema.typeName) does not relate to"
                )
            }
            sideloaded.append(try loading.decodeStored(records, store, confirmed))
        }
        let (merged, side) = try store.mergeKeepingSideloads(
            patches, sideloaded: sideloaded, target: nil, mode: .read, coder: coder,
            fetched: confirmed ?? hit.fetched)
        var instances = merged
        if !live.isEmpty {
            // Back in the order of the answer; a record the model's hook dropped has no place.
            var decoded = merged.makeIterator()
            instances = []
            instances.reserveCapacity(hit.records.count)
            for index in hit.records.indices {
                if let instance = live[index] ?? decoded.next() { instances.append(instance) }
            }
        }
        withExtendedLifetime(side) { if !side.isEmpty { Model.resourceSchema.adoptRelated(instances, in: store) } }
        return instances
    }

    /// The live instances of cached records that are at least as new as the records, by the
    /// records' places: those need not be decoded, the merge would skip them.
    private func liveAtLeastAsNew(_ records: [StoredRecord]) -> [Int: Model] {
        let instances: [(Int, Model)] = store.identityMap.withLock { map in
            guard !map.isEmpty else { return [] }
            return records.indices.compactMap { index in
                map.instance(of: Model.self, id: .string(records[index].key.id)).map { (index, $0) }
            }
        }
        var live: [Int: Model] = [:]
        // Each instance's state is read outside the map's lock, which is never held around it.
        for (index, instance) in instances {
            if let merged = instance._$state.fetched, merged.order >= records[index].order { live[index] = instance }
        }
        return live
    }
}
