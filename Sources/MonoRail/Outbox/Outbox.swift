import Foundation
import Logging
import MonoRailTransport

/// The writes a store keeps until the server confirms them: creates, saves and deletes made under
/// the ``WritePolicy/queued`` write policy, or while the server could not be reached under
/// ``WritePolicy/queuedWhenOffline``.
///
/// ```swift
/// MonoRail.configure {
///     $0.storage = try SQLiteStorage(path: path)     // the outbox lives in the same file
///     $0.writePolicy = .queued
/// }
/// train.company = "DB"
/// try await train.save()                             // applied locally, kept durably; returns at once
/// ResourceStore.default.outbox.pendingCount          // 1
/// try await ResourceStore.default.outbox.flush()     // sends what is kept, in order, exactly once
/// ```
///
/// **Exactly once.** Every write carries an `Idempotency-Key` made when it is kept, and every
/// attempt — after a lost answer, a `503`, or a restart — sends the same key and body, so a server
/// that honours the header (draft-ietf-httpapi-idempotency-key-header) applies it once. A write
/// leaves the outbox only when the server answered it.
///
/// **Order.** Writes are sent one at a time, in the order they were made: a record's writes in
/// order, a child's create after its parent's. A write waits while the server cannot be reached and
/// is tried again with backoff (`Retry-After` honoured), or as soon as another request succeeds.
///
/// **Optimistic state.** A kept write shows on the live instance at once
/// (``ResourceModel/hasPendingChanges``, ``ResourceModel/pendingChanges``); the outbox holds the
/// instance until the server answers. A record created in the outbox gets a local id
/// (``ResourceID/isLocal``) that the server's id replaces everywhere when the create goes through:
/// in the identity map, in `@References` fields of instances with kept writes, and in later kept
/// writes, whose bodies are rewritten before they are sent.
///
/// **Rejections.** When the server refuses a write (a 4xx other than 408 and 429), the instance
/// rolls back to the server's state and keeps the error (``ResourceModel/rejection``, and
/// ``ResourceModel/errors`` for validation messages); later writes to the same record and writes
/// naming a record whose create was refused are not sent but rejected with
/// ``APIError/Code/dependencyRejected``. Each is reported in ``events``.
public final class Outbox: Sendable {
    /// A kept write with what the live instance needs: the instance, held until the server answers,
    /// and the edit numbers the write sends.
    struct Entry: Sendable {
        var write: PendingWrite
        var instance: (any ResourceModel)?
        var sent: [UInt64]
        /// Whether the storage holds it: only a kept write is sent.
        var isKept: Bool
    }

    /// How one attempt ended.
    enum Outcome: Sendable {
        /// The server took it; a create's record has this id, and the answer this entity tag.
        case confirmed(ResourceID?, etag: String?)
        /// The server refused it.
        case rejected(APIError)
        /// No answer: try again after the delay, or the server's `Retry-After`.
        case unreachable(APIError, retryAfter: Duration?)
    }

    /// How a replay run ended.
    enum RunResult: Sendable {
        /// Nothing left that can be sent.
        case drained
        /// The server could not be reached; writes are still kept.
        case stopped(APIError)
    }

    private struct State: Sendable {
        weak var store: ResourceStore?
        var storage: (any OutboxStorage)?
        var opening: Task<Void, any Error>?
        var entries: [Entry] = []
        var nextSequence: Int64 = 1
        /// Each model's putting back of its kept writes on live instances, by resource name.
        var restoring: [String: Task<Void, Never>] = [:]
        /// Whether sending waits for `flush()`.
        var isPaused = false
        /// Calls of `flush()` waiting: a paused outbox still sends for them.
        var flushes = 0
        /// Local ids the server has replaced, and by what.
        var replaced: [String: ResourceID] = [:]
        /// How to send each restored model's writes, by resource name.
        var replays: [String: any OutboxReplaying] = [:]
        var run: Task<RunResult, Never>?
        var retry: Task<Void, Never>?
        var retryDelay: Duration = .seconds(1)
    }

    private let state: Locked<State>
    private let broadcaster = UpdateBroadcaster<OutboxEvent>()

    init(store: ResourceStore) {
        state = Locked(State(store: store))
    }

    // MARK: - For the app

    /// The number of writes kept and not yet answered by the server.
    public var pendingCount: Int { state.withLock { $0.entries.count } }

    /// The writes kept, in the order they will be sent.
    public var pending: [PendingWrite] { state.withLock { $0.entries.map(\.write) } }

    /// What happens to writes from now on: kept, sent, confirmed, rejected, retrying.
    public var events: AsyncStream<OutboxEvent> { broadcaster.stream() }

    /// Sends every kept write, in order, and returns when none is left; writes the server refuses
    /// are rolled back and reported, not thrown.
    ///
    /// - Throws: ``APIError`` when the server cannot be reached (the writes stay kept and are tried
    ///   again later), or the storage's error when it cannot be read.
    public func flush() async throws {
        state.withLock { $0.flushes += 1 }
        defer { state.withLock { $0.flushes -= 1 } }
        try await load()
        while true {
            if case .stopped(let error) = await startRun().value { throw error }
            let (head, isRestored) = state.withLock { state in
                (state.entries.first, state.entries.first.map { state.replays[$0.write.model] != nil } ?? true)
            }
            guard let head else { return }
            guard isRestored else {
                throw APIError(
                    .invalidRequest,
                    "kept writes of \"\(head.write.model)\" wait for their model: use it once, or register it "
                        + "with configuration.models")
            }
            // A write being kept right now is sent once its storage holds it.
            if !head.isKept { try await Task.sleep(for: .milliseconds(1)) }
        }
    }

    /// Restores the kept writes of models the store's configuration registers; others wait for
    /// their model's first action.
    private func restoreRegisteredModels() async throws {
        let (store, waiting) = state.withLock { state in
            (state.store, Set(state.entries.map(\.write.model)).subtracting(state.restoring.keys))
        }
        guard let store, !waiting.isEmpty else { return }
        let models = store.configuration.models
        for name in waiting.sorted() {
            guard let type = models.model(singular: name) else { continue }
            try await restoreModel(type, in: store)
        }
    }

    private func restoreModel<Model: ResourceModel>(_ type: Model.Type, in store: ResourceStore) async throws {
        try await restore(type, in: store)
    }

    /// Reads the kept writes from storage, and puts those of the models registered in
    /// ``MonoRail/Configuration/models`` back on live instances. The first action of each model
    /// does this for its own; call it at launch to show what is waiting before any action, or to
    /// read ``pending``.
    ///
    /// - Throws: The storage's error when it cannot be read.
    public func load() async throws {
        try await open()
        try await restoreRegisteredModels()
    }

    /// Forgets every kept write without sending it — for sign-out, where the next account must not
    /// send the last one's writes; ``ResourceStore/clear()`` calls it. A write being sent right now
    /// may still reach the server. Instances keep their values; what was pending is unsaved again.
    ///
    /// ```swift
    /// try? await store.outbox.flush()   // send what can be sent first
    /// try await store.clear()           // then forget the rest with everything else
    /// ```
    ///
    /// - Throws: The storage's error when it cannot be read or written.
    public func discardAll() async throws {
        try await open()
        let discarded = state.withLock { state in
            defer {
                state.entries = []
                state.retry?.cancel()
                state.retry = nil
            }
            return state.entries
        }
        for entry in discarded {
            if let instance = entry.instance { Self.forgetPending(instance) }
        }
        try await storage().settle(removing: discarded.map(\.write.sequence), updating: [])
    }

    private static func forgetPending<Model: ResourceModel>(_ instance: Model) {
        instance._$state.state.withLock { state in
            state.pending = []
            state.isDeletePending = false
        }
    }

    // MARK: - Opening

    /// Reads the kept writes from storage, once.
    func open() async throws {
        let (opening, made) = state.withLock { state -> (Task<Void, any Error>, Bool) in
            if let opening = state.opening { return (opening, false) }
            let storage = state.storage ?? Self.storage(for: state.store)
            state.storage = storage
            let opening = Task { [weak self] in
                let writes = try await storage.pendingWrites()
                self?.state.withLock { state in
                    let loaded = writes.map { Entry(write: $0, instance: nil, sent: [], isKept: true) }
                    state.entries = loaded + state.entries
                    state.nextSequence = max(state.nextSequence, (writes.last?.sequence ?? 0) + 1)
                }
            }
            state.opening = opening
            return (opening, true)
        }
        do {
            try await opening.value
        } catch {
            // A failed read is tried again by the next action.
            state.withLock { state in if made { state.opening = nil } }
            throw error
        }
    }

    private static func storage(for store: ResourceStore?) -> any OutboxStorage {
        (store?.configuration.storage as? any OutboxStorage) ?? InMemoryOutboxStorage()
    }

    /// Puts the kept writes of a model back on live instances, once per model: the first action of
    /// each model after a launch waits for it (and so does any action that comes meanwhile), so it
    /// sees its records as the app left them. The model's writes are sent only once their instances
    /// are back.
    func restore<Model: ResourceModel>(_ type: Model.Type, in store: ResourceStore) async throws {
        try await open()
        let restoring = state.withLock { state -> Task<Void, Never> in
            if let restoring = state.restoring[Model.resourceName] { return restoring }
            let writes = state.entries.filter { $0.write.model == Model.resourceName && $0.instance == nil }
                .map(\.write)
            let restoring = Task { [weak self, weak store] in
                guard let self, let store else { return }
                let applied = writes.isEmpty ? [:] : await OutboxReplay<Model>().restore(writes, in: store)
                self.state.withLock { state in
                    for index in state.entries.indices {
                        guard let (instance, sent) = applied[state.entries[index].write.sequence] else { continue }
                        state.entries[index].instance = instance
                        state.entries[index].sent = sent
                    }
                    state.replays[Model.resourceName] = OutboxReplay<Model>()
                }
                if !writes.isEmpty { self.startAutomaticRun() }
            }
            state.restoring[Model.resourceName] = restoring
            return restoring
        }
        await restoring.value
    }

    // MARK: - Keeping

    /// Whether writes are kept now: a queued-when-offline write goes behind them, to keep the order.
    var isHoldingWrites: Bool { state.withLock { !$0.entries.isEmpty } }

    /// Keeps a write: in memory at once (so its order is fixed), in storage before it returns.
    ///
    /// - Parameter apply: The optimistic change, made once the storage holds the write.
    /// - Throws: The storage's error; nothing is kept then.
    func keep(
        _ make: (Int64) -> PendingWrite, instance: any ResourceModel, sent: [UInt64], apply: () -> Void
    ) async throws -> PendingWrite {
        // The caller opened the outbox: it asked whether writes are held first.
        let (write, storage) = state.withLock { state -> (PendingWrite, (any OutboxStorage)?) in
            let write = make(state.nextSequence)
            state.nextSequence += 1
            state.entries.append(Entry(write: write, instance: instance, sent: sent, isKept: false))
            return (write, state.storage)
        }
        do {
            try await (storage ?? InMemoryOutboxStorage()).enqueue(write)
        } catch {
            state.withLock { state in state.entries.removeAll { $0.write.sequence == write.sequence } }
            throw error
        }
        apply()
        state.withLock { state in
            if let index = state.entries.lastIndex(where: { $0.write.sequence == write.sequence }) {
                state.entries[index].isKept = true
            }
        }
        broadcaster.yield(.queued(write))
        // While the server is known unreachable, the write waits for the retry instead of trying alone.
        if state.withLock({ $0.retry == nil }) { startAutomaticRun() }
        return write
    }

    /// Whether a write of this record is kept.
    func holdsWrite(model: String, id: ResourceID?) -> Bool {
        let key = Self.recordKey(model: model, id: id)
        return state.withLock { state in state.entries.contains { Self.recordKey($0.write) == key } }
    }

    /// The replaced local ids, to rewrite a body about to be kept.
    var replacedIDs: [String: ResourceID] { state.withLock { $0.replaced } }

    /// Tells the outbox a request went through: a write waiting to be tried again is tried now.
    func noteReachable() {
        let waiting = state.withLock { state -> Bool in
            guard state.run == nil, let retry = state.retry else { return false }
            retry.cancel()
            state.retry = nil
            return true
        }
        if waiting { startAutomaticRun() }
    }

    // MARK: - Replaying

    /// Whether kept writes wait for ``flush()`` instead of being sent on their own — after they are
    /// kept, on retries, and when a request goes through. For an app that sends only on Wi-Fi.
    /// Setting it sends no write beyond the one being sent, if any; ``pause()`` waits for that one.
    /// Setting it back to `false` sends what waits.
    public var isPaused: Bool {
        get { state.withLock { $0.isPaused } }
        set {
            state.withLock { $0.isPaused = newValue }
            if !newValue { startAutomaticRun() }
        }
    }

    /// Pauses automatic sending (``isPaused``) and returns once no write is being sent: the one in
    /// flight, if any, has its answer, and no other starts unless ``flush()`` is called. For a store
    /// about to hand its storage file to another.
    public func pause() async {
        let run = state.withLock { state in
            state.isPaused = true
            state.retry?.cancel()
            state.retry = nil
            return state.run
        }
        _ = await run?.value
    }

    /// A replay run, unless paused.
    private func startAutomaticRun() {
        guard !state.withLock({ $0.isPaused }) else { return }
        startRun()
    }

    /// The replay run, started if none is running.
    @discardableResult
    private func startRun() -> Task<RunResult, Never> {
        state.withLock { state in
            if let run = state.run { return run }
            state.retry?.cancel()
            state.retry = nil
            let run = Task { [weak self] in
                guard let self else { return RunResult.drained }
                let result = await self.replay()
                self.state.withLock { $0.run = nil }
                if case .stopped = result { self.scheduleRetry() }
                return result
            }
            state.run = run
            return run
        }
    }

    /// Sends kept writes in order until none is left, the next one's model is not restored yet, or
    /// the server cannot be reached.
    private func replay() async -> RunResult {
        while true {
            let next = state.withLock { state -> (Entry, ResourceStore, [String: ResourceID], any OutboxReplaying)? in
                // Paused between two writes of an automatic run: the next waits, unless a flush does.
                guard !state.isPaused || state.flushes > 0, let head = state.entries.first, head.isKept,
                    let store = state.store,
                    let replay = state.replays[head.write.model]
                else { return nil }
                return (head, store, state.replaced, replay)
            }
            guard let (entry, store, replaced, replay) = next else { return .drained }
            let write = entry.write.replacingLocalIDs(replaced)
            // A local id still unknown here belongs to a create that was refused.
            let missing = write.referencedLocalIDs.union(
                write.verb != .create && write.id?.isLocal == true ? [write.id?.description ?? ""] : [])
            if !missing.isEmpty {
                await reject(
                    entry,
                    APIError(
                        .dependencyRejected,
                        "\(write.model) write \(write.sequence) names \(missing.sorted().joined(separator: ", ")), "
                            + "whose create the server refused"),
                    in: store)
                continue
            }
            // Noted before sending: an earlier attempt of this key may still be running on the server.
            var attempted = write
            attempted.attempts += 1
            do {
                try await storage().settle(removing: [], updating: [attempted])
            } catch {
                return .stopped(
                    APIError(.transport, "the outbox's storage could not be written: \(error)", underlyingError: error))
            }
            state.withLock { state in
                if state.entries.first?.write.sequence == write.sequence { state.entries[0].write.attempts += 1 }
            }
            broadcaster.yield(.sent(attempted))
            switch await replay.send(attempted, entry: entry, in: store) {
            case .confirmed(let newID, let etag):
                await confirm(entry, write: attempted, newID: newID, etag: etag, in: store)
            case .rejected(let error):
                await reject(entry, error, in: store)
            case .unreachable(let error, let retryAfter):
                let delay = retryAfter ?? Self.backoff(attempts: attempted.attempts)
                state.withLock { $0.retryDelay = delay }
                broadcaster.yield(.retrying(attempted, error, after: delay))
                return .stopped(error)
            }
        }
    }

    private func storage() -> any OutboxStorage {
        state.withLock { $0.storage } ?? InMemoryOutboxStorage()
    }

    /// The write went through: it leaves the outbox, a create's local id is replaced in later
    /// writes and their instances, and the next write of the record expects the answer's entity
    /// tag in `If-Match` — rewritten in storage in the same transaction.
    private func confirm(
        _ entry: Entry, write: PendingWrite, newID: ResourceID?, etag: String?, in store: ResourceStore
    ) async {
        let local = entry.write.id.flatMap { $0.isLocal ? $0.description : nil }
        let record = Self.recordKey(entry.write)
        let (rewritten, instances) = state.withLock { state -> ([PendingWrite], [any ResourceModel]) in
            state.entries.removeAll { $0.write.sequence == entry.write.sequence }
            var replacing: [String: ResourceID] = [:]
            if let local, let newID {
                state.replaced[local] = newID
                replacing[local] = newID
            }
            var rewritten: [PendingWrite] = []
            var instances: [any ResourceModel] = []
            var chained = false
            for index in state.entries.indices {
                var updated = state.entries[index].write.replacingLocalIDs(replacing)
                if !chained, Self.recordKey(state.entries[index].write) == record {
                    chained = true
                    if updated.waitsForIfMatch {
                        updated.ifMatch = etag
                        updated.waitsForIfMatch = false
                    }
                }
                if updated != state.entries[index].write {
                    state.entries[index].write = updated
                    rewritten.append(updated)
                }
                if !replacing.isEmpty, let instance = state.entries[index].instance { instances.append(instance) }
            }
            return (rewritten, instances)
        }
        if let local, let newID {
            for instance in instances { Self.replaceLocalIDs([local: newID], in: instance) }
        }
        do {
            try await storage().settle(removing: [entry.write.sequence], updating: rewritten)
        } catch {
            store.configuration.logger.error(
                """
                the outbox could not note that the server took write \(write.sequence): \(error); \
                it will be sent again with its Idempotency-Key
                """)
        }
        broadcaster.yield(.confirmed(write))
    }

    /// The server refused the write: it and the writes depending on it leave the outbox, each
    /// instance rolled back.
    private func reject(_ entry: Entry, _ error: APIError, in store: ResourceStore) async {
        let refused = state.withLock { state -> [(Entry, APIError)] in
            var refused = [(entry, error)]
            var records: Set<String> = [Self.recordKey(entry.write)]
            var locals: Set<String> = entry.write.id.flatMap { $0.isLocal ? [$0.description] : nil } ?? []
            for later in state.entries where later.write.sequence != entry.write.sequence {
                let write = later.write
                guard records.contains(Self.recordKey(write)) || !write.referencedLocalIDs.isDisjoint(with: locals)
                else { continue }
                refused.append(
                    (
                        later,
                        APIError(
                            .dependencyRejected,
                            "\(write.model) write \(write.sequence) depended on write \(entry.write.sequence), which "
                                + "the server refused: \(error.message)", underlyingError: error)
                    ))
                records.insert(Self.recordKey(write))
                if let id = write.id, id.isLocal { locals.insert(id.description) }
            }
            let removed = Set(refused.map(\.0.write.sequence))
            state.entries.removeAll { removed.contains($0.write.sequence) }
            return refused
        }
        // Latest first, so each field ends at the server's state.
        let replays = state.withLock { $0.replays }
        for (entry, error) in refused.reversed() {
            replays[entry.write.model]?.rollBack(entry.write, entry: entry, error: error, in: store)
        }
        do {
            try await storage().settle(removing: refused.map(\.0.write.sequence), updating: [])
        } catch {
            store.configuration.logger.error("the outbox could not forget refused writes: \(error)")
        }
        for (entry, error) in refused { broadcaster.yield(.rejected(entry.write, error)) }
    }

    private static func replaceLocalIDs<Model: ResourceModel>(_ replaced: [String: ResourceID], in instance: Model) {
        let store = instance._$state.snapshot().store ?? .default
        instance._$state.replaceLocalIDs(
            replaced, of: instance, coder: FieldCoder(options: store.setup(for: Model.self).coding))
    }

    private static func recordKey(_ write: PendingWrite) -> String {
        recordKey(model: write.model, id: write.id)
    }

    private static func recordKey(model: String, id: ResourceID?) -> String {
        "\(model) \(id?.description ?? "")"
    }

    // MARK: - Retrying

    /// 1 s, 2 s, 4 s, … up to a minute, with a quarter of jitter.
    static func backoff(attempts: Int) -> Duration {
        let seconds = min(60, pow(2, Double(max(0, attempts - 1))))
        return .milliseconds(Int(seconds * 1000 * Double.random(in: 0.75...1)))
    }

    private func scheduleRetry() {
        state.withLock { state in
            guard state.run == nil, !state.entries.isEmpty else { return }
            let delay = state.retryDelay
            state.retry?.cancel()
            state.retry = Task { [weak self] in
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled, let self else { return }
                self.state.withLock { $0.retry = nil }
                self.startAutomaticRun()
            }
        }
    }
}
