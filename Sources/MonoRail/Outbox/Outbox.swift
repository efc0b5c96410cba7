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
/// leaves the outbox only when the server answered it. Storage notes each attempt before it is
/// sent and forgets each write the server took — a create or a delete at once, updates with the
/// next commit — so that after a crash a few updates the server took may be sent again, under
/// their keys.
///
/// **Order.** A record's writes are sent in the order they were made, one after the other, and so
/// is every chain of creates: a child's create after its parent's, a write naming a record created
/// in the outbox after that create. Writes on no common record or chain go out side by side, up to
/// ``OutboxLimits/concurrentWrites`` at once. A write waits while the server cannot be reached and
/// is tried again with backoff (`Retry-After` honoured), or as soon as another request succeeds.
///
/// **After a restart.** The writes an earlier launch kept are read from storage the first time the
/// app asks (``pendingCount``) or acts. ``flush()`` and ``load()`` put them back on live instances
/// and send them before the app has used their models — each write names its model's Swift type
/// (``PendingWrite/modelType``) — and merge and store the answers as an action's.
///
/// **Optimistic state.** A kept write shows on the live instance at once
/// (``ResourceModel/hasPendingChanges``, ``ResourceModel/pendingChanges``); the outbox holds the
/// instance until the server answers. A record created in the outbox gets a local id
/// (``ResourceID/isLocal``) that the server's id replaces everywhere when the create goes through:
/// in the identity map, in `@References` fields of instances with kept writes, and in later kept
/// writes, whose bodies are rewritten before they are sent.
///
/// **Parking.** A write the server refuses (a 4xx other than 404, 408, 409, 410, 425 and 429), or
/// keeps failing past ``MonoRail/Configuration/outboxLimits``, is *parked* (``parked``): kept, not
/// sent, and reported as ``OutboxEvent/parked(_:_:)``. Its instance looks as after the same refusal
/// of a direct write: the values the app gave stay, unsaved again (``ResourceModel/hasChanges``),
/// with the error in ``ResourceModel/rejection`` and ``ResourceModel/errors``. The writes that
/// depend on it — later writes of the same record, writes naming a record it creates — park with
/// it (``/MonoRailClient/APIError/Code/dependencyRejected``); every other write goes on. A parked write waits for
/// the app: saving the record again sends the parked write with the new values in its place,
/// ``retry(_:)`` sends it as it is, ``discard(_:)`` drops it and its dependents and rolls their
/// instances back. Parked writes are kept in storage like the others.
///
/// A `404` or `410` says the record is gone: the write and its dependents leave the outbox and the
/// instance is marked deleted (``OutboxEvent/rejected(_:_:)``).
public final class Outbox: Sendable {
    /// A kept write with what the live instance needs: the instance, held until the server answers,
    /// and the edit numbers the write sends.
    struct Entry: Sendable {
        var write: PendingWrite
        var instance: (any ResourceModel)?
        var sent: [UInt64]
        /// Whether the storage holds it: only a kept write is sent.
        var isKept: Bool
        /// After a failed answer, not sent again before this.
        var notBefore: ContinuousClock.Instant?
        /// That failed answer.
        var failure: APIError?
        /// The attempts storage holds for it: a commit notes the attempts of the next few writes
        /// ahead of sending them, so that each is noted before it goes without a commit of its own.
        var noted: Int
        /// Whether it is being sent now.
        var isSending = false

        init(write: PendingWrite, instance: (any ResourceModel)?, sent: [UInt64], isKept: Bool) {
            self.write = write
            self.instance = instance
            self.sent = sent
            self.isKept = isKept
            noted = write.attempts
        }

        var isParked: Bool { write.parking != nil }
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
        /// Everything that could be sent was; writes the server answered with a failure wait for
        /// their next attempt.
        case waiting(APIError)
    }

    private struct State: Sendable {
        weak var store: ResourceStore?
        var storage: (any OutboxStorage)?
        /// Whether the writes kept by earlier launches are read.
        var isOpen = false
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
        /// What the run changed in memory and has not committed to storage yet.
        var unsettled = Unsettled()
        var retry: Task<Void, Never>?
        var retryDelay: Duration = .seconds(1)
    }

    /// Writes the run confirmed (`removed`) or changed (`rewritten`) in memory since its last commit:
    /// committed with the next one — when a write's attempt is noted, a create or delete is
    /// confirmed, a write is parked or refused, or the run ends.
    private struct Unsettled: Sendable {
        var removed: Set<Int64> = []
        var rewritten: Set<Int64> = []

        var isEmpty: Bool { removed.isEmpty && rewritten.isEmpty }

        mutating func formUnion(_ other: Unsettled) {
            removed.formUnion(other.removed)
            rewritten.formUnion(other.rewritten)
        }
    }

    /// How many writes one commit notes as attempted ahead of sending them. After a crash, at most
    /// this many updates the server already took are sent again under their keys.
    static let notedAhead = 16

    private let state: Locked<State>
    private let broadcaster = UpdateBroadcaster<OutboxEvent>()
    /// The store's, held strongly: the outbox holds its store weakly.
    private let announcer: Announcer

    init(store: ResourceStore) {
        state = Locked(State(store: store))
        announcer = store.announcer
    }

    // MARK: - For the app

    /// The number of writes kept to be sent: every one not yet answered by the server, except the
    /// ``parked`` ones.
    ///
    /// Counted from storage the first time it is read, before the app uses any model.
    public var pendingCount: Int {
        openForReading()
        return state.withLock { $0.entries.count { !$0.isParked } }
    }

    /// The writes kept to be sent, in the order they will be sent.
    public var pending: [PendingWrite] {
        openForReading()
        return state.withLock { $0.entries.filter { !$0.isParked }.map(\.write) }
    }

    /// The writes the outbox stopped sending, in the order they were made, each with why
    /// (``PendingWrite/parking``): until the app saves the record again, ``retry(_:)`` or
    /// ``discard(_:)``.
    ///
    /// ```swift
    /// for write in store.outbox.parked {
    ///     print(write.model, write.id, write.parking?.message ?? "")
    /// }
    /// ```
    public var parked: [PendingWrite] {
        openForReading()
        return state.withLock { $0.entries.filter(\.isParked).map(\.write) }
    }

    /// What happens to writes from now on: kept, sent, confirmed, retrying, parked, discarded,
    /// rejected.
    public var events: AsyncStream<OutboxEvent> { broadcaster.stream() }

    /// Tells the ``events`` streams, where the store's ``MonoRail/Configuration/delivery`` says.
    private func tell(_ event: OutboxEvent) {
        guard broadcaster.hasSubscribers else { return }
        announcer.announce { [broadcaster] in broadcaster.yield(event) }
    }

    /// Sends every kept write, in order, and returns when none is left but the ``parked`` ones;
    /// writes the server refuses are parked and reported, not thrown.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` when the server cannot be reached, or answered a write with a failure
    ///   (the writes stay kept and are tried again later), or the storage's error when it cannot be
    ///   read.
    public func flush() async throws {
        state.withLock { $0.flushes += 1 }
        defer { state.withLock { $0.flushes -= 1 } }
        try await load()
        while true {
            let (run, isNew) = startRun()
            switch await run.value {
            // A run that began before this call may have found the server away before it came back.
            case .stopped where !isNew: continue
            case .stopped(let error), .waiting(let error): throw error
            case .drained: break
            }
            let (head, isRestored) = state.withLock { state in
                let head = state.entries.first { !$0.isParked }
                return (head, head.map { state.replays[$0.write.model] != nil } ?? true)
            }
            guard let head else { return }
            guard isRestored else {
                throw APIError(
                    .invalidConfiguration,
                    "kept writes of \"\(head.write.model)\" name a model this app does not have"
                        + (head.write.modelType.map { " (Swift type \($0))" } ?? "")
                        + ": register the model for that resource name with configuration.models")
            }
            // A write being kept right now is sent once its storage holds it.
            if !head.isKept { try await Task.sleep(for: .milliseconds(1)) }
        }
    }

    /// Restores the kept writes of every model that has some, before the app uses it: its type is
    /// the one registered under its name in ``MonoRail/Configuration/models``, else the Swift type
    /// the writes name (``PendingWrite/modelType``).
    private func restoreAllModels() async throws {
        let (store, waiting) = state.withLock { state -> (ResourceStore?, [String: [String]]) in
            var waiting: [String: [String]] = [:]
            for entry in state.entries where state.restoring[entry.write.model] == nil {
                waiting[entry.write.model, default: []] += entry.write.modelType.map { [$0] } ?? []
            }
            return (state.store, waiting)
        }
        guard let store, !waiting.isEmpty else { return }
        let models = store.configuration.models
        for (name, types) in waiting.sorted(by: { $0.key < $1.key }) {
            guard let type = models.model(singular: name) ?? Self.model(named: name, amongTypes: types) else {
                continue
            }
            try await restoreModel(type, in: store)
        }
    }

    /// The model of kept writes found by the Swift type they name, if this process has it under
    /// that resource name: the app may have renamed the type since.
    private static func model(named name: String, amongTypes types: [String]) -> (any ResourceModel.Type)? {
        for typeName in Set(types) {
            // The runtime's lookup that checks the name it is given: storage may hold anything.
            if let type = _typeByName(typeName) as? any ResourceModel.Type, type.resourceName == name {
                return type
            }
        }
        return nil
    }

    private func restoreModel<Model: ResourceModel>(_ type: Model.Type, in store: ResourceStore) async throws {
        try await restore(type, in: store)
    }

    /// Reads the kept writes from storage and puts them back on live instances, for every model
    /// that has some, and starts sending them. The first action of each model does this for its
    /// own, and ``flush()`` for all; call it at launch to show what is waiting before any action.
    ///
    /// - Throws: The storage's error when it cannot be read.
    public func load() async throws {
        try open()
        try await restoreAllModels()
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
        try open()
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

    /// Reads the kept writes from storage, once; a failed read is tried again by the next call.
    func open() throws {
        let storage = state.withLock { state -> (any OutboxStorage)? in
            guard !state.isOpen else { return nil }
            let storage = state.storage ?? Self.storage(for: state.store)
            state.storage = storage
            return storage
        }
        guard let storage else { return }
        // Read outside the lock; of two first reads at once, the first to finish counts.
        let writes = try storage.pendingWrites()
        state.withLock { state in
            guard !state.isOpen else { return }
            state.isOpen = true
            let loaded = writes.map { Entry(write: $0, instance: nil, sent: [], isKept: true) }
            state.entries = loaded + state.entries
            state.nextSequence = max(state.nextSequence, (writes.last?.sequence ?? 0) + 1)
        }
    }

    /// ``open()`` for what the app reads without waiting: a storage that cannot be read is logged,
    /// and the writes this process kept are what there is.
    private func openForReading() {
        do {
            try open()
        } catch {
            let logger = state.withLock { $0.store?.configuration.logger }
            logger?.error("the outbox's kept writes could not be read: \(error); only this launch's are counted")
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
        try open()
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

    /// Whether a write of this record is kept behind others now: any write waiting to be sent, or
    /// a parked one of the record, which the write joins. A queued-when-offline write goes behind
    /// them, to keep the order.
    func isHoldingWrites(model: String, id: ResourceID?) -> Bool {
        let key = WrittenRecord(model: model, id: id)
        return state.withLock { state in
            state.entries.contains { !$0.isParked || WrittenRecord($0.write) == key }
        }
    }

    /// Keeps a write: in memory at once (so its order is fixed), in storage before it returns.
    ///
    /// - Parameter apply: The optimistic change, made once the storage holds the write.
    /// - Throws: The storage's error; nothing is kept then.
    func keep(
        _ make: (Int64) -> PendingWrite, instance: any ResourceModel, sent: [UInt64], apply: () -> Void
    ) async throws -> PendingWrite {
        // The caller opened the outbox: it asked whether writes are held first.
        let (write, storage, requeued) = state.withLock {
            state -> (PendingWrite, (any OutboxStorage)?, Requeued?) in
            let write = make(state.nextSequence)
            if let requeued = Self.requeue(write, sent: sent, in: &state.entries) {
                return (requeued.write, state.storage, requeued)
            }
            state.nextSequence += 1
            state.entries.append(Entry(write: write, instance: instance, sent: sent, isKept: false))
            return (write, state.storage, nil)
        }
        if let requeued {
            // The parked writes of the record are sent again, with the new values, in their place.
            do {
                try await (storage ?? InMemoryOutboxStorage()).settle(
                    removing: requeued.removed, updating: requeued.updated)
            } catch {
                // Not kept as the new write: the outbox stays as storage has it.
                state.withLock { state in
                    for entry in requeued.previous {
                        if let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) {
                            state.entries[index] = entry
                        } else {
                            let index = state.entries.firstIndex { $0.write.sequence > entry.write.sequence }
                            state.entries.insert(entry, at: index ?? state.entries.endIndex)
                        }
                    }
                }
                throw error
            }
            apply()
            for entry in requeued.resumed { tell(.queued(entry.write)) }
            if state.withLock({ $0.retry == nil }) { startAutomaticRun() }
            return write
        }
        do {
            try await (storage ?? InMemoryOutboxStorage()).enqueue(write)
        } catch {
            state.withLock { state in state.entries.removeAll { $0.write.sequence == write.sequence } }
            throw error
        }
        apply()
        let rewritten = state.withLock { state -> PendingWrite? in
            guard let index = state.entries.lastIndex(where: { $0.write.sequence == write.sequence }) else {
                return nil
            }
            state.entries[index].isKept = true
            // A create confirmed while this was kept replaced a local id in it, which storage missed.
            return state.entries[index].write == write ? nil : state.entries[index].write
        }
        if let rewritten {
            do {
                try await (storage ?? InMemoryOutboxStorage()).settle(removing: [], updating: [rewritten])
            } catch {
                state.withLock { _ = $0.unsettled.rewritten.insert(rewritten.sequence) }
            }
        }
        tell(.queued(write))
        // While the server is known unreachable, the write waits for the retry instead of trying alone.
        if state.withLock({ $0.retry == nil }) { startAutomaticRun() }
        return write
    }

    /// What a new write of a record with parked writes did to the outbox.
    private struct Requeued {
        /// The record's first parked write, now with the new values and key, waiting to be sent.
        var write: PendingWrite
        /// The record's other parked writes, which the new one replaces.
        var removed: [Int64]
        /// Writes rewritten in storage: the requeued one and the writes parked with it.
        var updated: [PendingWrite]
        /// Entries sent again.
        var resumed: [Entry]
        /// The entries it changed or removed, as they were.
        var previous: [Entry]
    }

    /// Puts a new write of a record into the record's first parked write, which is sent again in
    /// its place (before the writes that depend on it) with the new body laid over its own and the
    /// new idempotency key; the record's later parked writes and the writes parked with them
    /// resume. `nil` when the record has none parked, or the new write is a delete, which goes
    /// behind them as any write.
    private static func requeue(_ write: PendingWrite, sent: [UInt64], in entries: inout [Entry]) -> Requeued? {
        let key = WrittenRecord(write)
        guard write.verb != .destroy,
            let first = entries.firstIndex(where: { $0.isParked && WrittenRecord($0.write) == key })
        else { return nil }
        let before = entries
        var merged = entries[first].write
        let laterOfRecord = entries.indices.filter { $0 > first && WrittenRecord(entries[$0].write) == key }
        if merged.verb == .create {
            // A create's body has every field; the save's, the unsaved ones, laid over it.
            merged.body = merged.body.overlaid(with: write.body)
            merged.fields.append(contentsOf: write.fields.filter { !merged.fields.contains($0) })
        } else {
            // Parked, their fields became unsaved edits again: the new save sends each as it is now,
            // and no field the server changed meanwhile with a value from then.
            (merged.body, merged.fields) = (write.body, write.fields)
        }
        merged.idempotencyKey = write.idempotencyKey
        if write.ifMatch != nil || write.waitsForIfMatch {
            (merged.ifMatch, merged.waitsForIfMatch) = (write.ifMatch, write.waitsForIfMatch)
        }
        merged.attempts = 0
        merged.failures = 0
        merged.parking = nil
        var sentEdits = entries[first].sent
        for (offset, edit) in sent.enumerated() {
            if offset < sentEdits.count {
                sentEdits[offset] = max(sentEdits[offset], edit)
            } else {
                sentEdits.append(edit)
            }
        }
        entries[first].write = merged
        entries[first].sent = sentEdits
        entries[first].notBefore = nil
        var updated = [merged]
        var resumed = [entries[first]]
        for index in dependents(of: first, in: entries)
        where entries[index].write.parking?.code == .dependencyRejected
            && WrittenRecord(entries[index].write) != key
        {
            entries[index].write.parking = nil
            updated.append(entries[index].write)
            resumed.append(entries[index])
        }
        let removed = laterOfRecord.map { entries[$0].write.sequence }
        entries.removeAll { removed.contains($0.write.sequence) }
        let touched = Set(removed + updated.map(\.sequence))
        return Requeued(
            write: merged, removed: removed, updated: updated, resumed: resumed,
            previous: before.filter { touched.contains($0.write.sequence) })
    }

    /// The later writes that depend on the write at `index`, in order: writes of the same record,
    /// writes naming a record it creates, and so on along the chain.
    static func dependents(of index: Int, in entries: [Entry]) -> [Int] {
        var records: Set<WrittenRecord> = [WrittenRecord(entries[index].write)]
        var locals: Set<String> = entries[index].write.id.flatMap { $0.isLocal ? [$0.description] : nil } ?? []
        var found: [Int] = []
        for later in entries.indices where later > index {
            let write = entries[later].write
            guard records.contains(WrittenRecord(write)) || !write.referencedLocalIDs.isDisjoint(with: locals) else {
                continue
            }
            found.append(later)
            records.insert(WrittenRecord(write))
            if let id = write.id, id.isLocal { locals.insert(id.description) }
        }
        return found
    }

    /// Whether a write of this record is kept.
    func holdsWrite(model: String, id: ResourceID?) -> Bool {
        let key = WrittenRecord(model: model, id: id)
        return state.withLock { state in state.entries.contains { !$0.isParked && WrittenRecord($0.write) == key } }
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
    /// Setting it starts no write beyond the ones being sent, if any; ``pause()`` waits for those.
    /// Setting it back to `false` sends what waits.
    public var isPaused: Bool {
        get { state.withLock { $0.isPaused } }
        set {
            state.withLock { $0.isPaused = newValue }
            if !newValue { startAutomaticRun() }
        }
    }

    /// Pauses automatic sending (``isPaused``) and returns once no write is being sent: the ones in
    /// flight, if any, have their answers, and no other starts unless ``flush()`` is called. For a store
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

    /// The replay run, started if none is running; `isNew` says whether this call started it.
    @discardableResult
    private func startRun() -> (run: Task<RunResult, Never>, isNew: Bool) {
        state.withLock { state in
            if let run = state.run { return (run, false) }
            state.retry?.cancel()
            state.retry = nil
            let run = Task { [weak self] in
                guard let self else { return RunResult.drained }
                let result = await self.replay()
                self.state.withLock { $0.run = nil }
                switch result {
                case .stopped, .waiting: self.scheduleRetry()
                case .drained: break
                }
                return result
            }
            state.run = run
            return (run, true)
        }
    }

    /// What a replay run does next.
    private enum Next {
        /// Send this write with its model's replay.
        case send(Entry, any OutboxReplaying)
        /// Park the write with this sequence: it depends on the parked write `behind`.
        case park(Int64, behind: Int64)
        /// Nothing more can be sent now; the earliest write waiting after a failed answer may be
        /// sent then, and this was its failure.
        case none(waiting: (ContinuousClock.Instant, APIError)?)
    }

    /// The first kept write of a restored model that waits for no write before it — of the same
    /// record, or creating a record it names — that is parked, being sent, waiting after a failed
    /// answer, or not yet sendable itself. Order holds along every record and chain of local ids; a
    /// write on no such chain goes on past the others.
    private static func next(in state: State, now: ContinuousClock.Instant) -> Next {
        var parkedRecords: [WrittenRecord: Int64] = [:]
        var parkedLocals: [String: Int64] = [:]
        var heldRecords: Set<WrittenRecord> = []
        var heldLocals: Set<String> = []
        var earliest: (ContinuousClock.Instant, APIError)?
        // A long outbox is scanned once per write sent: each entry is read in place, not copied,
        // and a body is walked for local ids only once a create is held or parked.
        for index in state.entries.indices {
            let record = WrittenRecord(model: state.entries[index].write.model, id: state.entries[index].write.id)
            let isParked = state.entries[index].isParked
            let names = parkedLocals.isEmpty && heldLocals.isEmpty ? [] : state.entries[index].write.referencedLocalIDs
            let parkedBehind = parkedRecords[record] ?? names.lazy.compactMap { parkedLocals[$0] }.first
            let notBefore = state.entries[index].notBefore
            let isWaiting = notBefore.map { $0 > now } ?? false
            let isIdle = !isParked && !state.entries[index].isSending
            if isIdle, let parkedBehind { return .park(state.entries[index].write.sequence, behind: parkedBehind) }
            let isHeld = heldRecords.contains(record) || !names.isDisjoint(with: heldLocals)
            if isIdle, !isHeld, !isWaiting, state.entries[index].isKept,
                let replay = state.replays[state.entries[index].write.model]
            {
                return .send(state.entries[index], replay)
            }
            let sequence = state.entries[index].write.sequence
            let local = state.entries[index].write.id.flatMap { $0.isLocal ? $0.description : nil }
            if isParked {
                parkedRecords[record] = sequence
                if let local { parkedLocals[local] = sequence }
            } else {
                heldRecords.insert(record)
                if let local { heldLocals.insert(local) }
            }
            if isWaiting, let notBefore, let failure = state.entries[index].failure,
                earliest.map({ notBefore < $0.0 }) ?? true
            {
                earliest = (notBefore, failure)
            }
        }
        return .none(waiting: earliest)
    }

    /// One attempt of a write, and how it ended.
    private struct Attempt: Sendable {
        var entry: Entry
        var write: PendingWrite
        var outcome: Outcome
        var store: ResourceStore
    }

    /// Sends kept writes until none is left that can be sent now: the rest are parked, wait after
    /// a failed answer, wait for their model to be restored — or the server cannot be reached.
    /// Writes on no common record or chain go out side by side, up to
    /// ``OutboxLimits/concurrentWrites``.
    private func replay() async -> RunResult {
        await withTaskGroup(of: Attempt.self) { group in
            var sending = 0
            var stopped: APIError?
            var waiting: (ContinuousClock.Instant, APIError)?
            while true {
                starting: while stopped == nil {
                    waiting = nil
                    let (next, store, replaced) = state.withLock {
                        state -> (Next, ResourceStore?, [String: ResourceID]) in
                        // Paused between two writes of an automatic run: the next waits, unless a flush does.
                        guard !state.isPaused || state.flushes > 0 else { return (.none(waiting: nil), nil, [:]) }
                        return (Self.next(in: state, now: .now), state.store, state.replaced)
                    }
                    guard let store, sending < max(1, store.configuration.outboxLimits.concurrentWrites) else {
                        break starting
                    }
                    switch next {
                    case .none(let earliest):
                        waiting = earliest
                        break starting
                    case .park(let sequence, let behind):
                        await park(sequence, behind: behind, in: store)
                    case .send(let entry, let replay):
                        switch await begin(entry, replacing: replaced, in: store) {
                        case .skipped: break
                        case .failed(let error): stopped = error
                        case .begun(let attempted):
                            sending += 1
                            group.addTask {
                                let outcome = await replay.send(attempted, entry: entry, in: store)
                                return Attempt(entry: entry, write: attempted, outcome: outcome, store: store)
                            }
                        }
                    }
                }
                guard sending > 0 else { break }
                guard let attempt = await group.next() else { break }
                sending -= 1
                if let error = await take(attempt) {
                    stopped = stopped ?? error
                } else {
                    // An answer came: the server is there after all, and what found it away goes again.
                    stopped = nil
                }
            }
            await commitLogging()
            if let stopped { return .stopped(stopped) }
            guard let (notBefore, failure) = waiting else { return .drained }
            state.withLock { $0.retryDelay = max(.milliseconds(1), notBefore - .now) }
            return .waiting(failure)
        }
    }

    /// How starting to send a write went.
    private enum Beginning {
        /// Noted as attempted: send this.
        case begun(PendingWrite)
        /// Not sent: it names a record whose create the server refused, and was refused with it.
        case skipped
        /// Storage could not note the attempt: nothing more is sent.
        case failed(APIError)
    }

    /// Notes a write's attempt, unless an earlier commit did ahead of it, and marks it as being sent.
    private func begin(_ entry: Entry, replacing replaced: [String: ResourceID], in store: ResourceStore) async
        -> Beginning
    {
        let write = entry.write.replacingLocalIDs(replaced)
        // A local id still unknown here belongs to a create that was refused or discarded.
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
            return .skipped
        }
        var attempted = write
        attempted.attempts += 1
        // Noted before sending: an earlier attempt of this key may still be running on the server.
        do {
            try await commit(noting: write.sequence)
        } catch {
            return .failed(
                APIError(.transport, "the outbox's storage could not be written: \(error)", underlyingError: error))
        }
        // Rewritten here, by a create confirmed after it was kept: storage gets it with the next commit.
        let isRewritten = !replaced.isEmpty && write != entry.write
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else { return }
            state.entries[index].write = attempted
            state.entries[index].isSending = true
            if isRewritten { state.unsettled.rewritten.insert(write.sequence) }
        }
        tell(.sent(attempted))
        return .begun(attempted)
    }

    /// Takes an attempt's answer into the outbox; returns the error that stops the run, when the
    /// server could not be reached.
    private func take(_ attempt: Attempt) async -> APIError? {
        let (entry, write, store) = (attempt.entry, attempt.write, attempt.store)
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else { return }
            state.entries[index].isSending = false
        }
        switch attempt.outcome {
        case .confirmed(let newID, let etag):
            await confirm(entry, write: write, newID: newID, etag: etag, in: store)
        case .rejected(let error) where error.statusCode == 404 || error.statusCode == 410:
            await reject(entry, error, in: store)
        case .rejected(let error):
            var parked = entry
            parked.write = write
            await park(parked, error, in: store)
        case .unreachable(let error, let retryAfter) where Self.isAnswer(error):
            // The server is up and failed this write: it waits, and the writes that do not depend
            // on it go on.
            var failed = write
            failed.failures += 1
            let limits = store.configuration.outboxLimits
            let age = Duration.seconds(Date().timeIntervalSince(failed.createdAt))
            if failed.failures >= limits.maximumFailures || age >= limits.maximumAge {
                var parked = entry
                parked.write = failed
                var parking = error
                parking.message += " (failed \(failed.failures) times over \(age.components.seconds) s: parked)"
                await park(parked, parking, in: store)
                return nil
            }
            let delay = retryAfter ?? Self.backoff(attempts: failed.failures)
            state.withLock { state in
                guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else {
                    return
                }
                state.entries[index].write.failures = failed.failures
                state.entries[index].notBefore = .now + delay
                state.entries[index].failure = error
                state.unsettled.rewritten.insert(write.sequence)
            }
            tell(.retrying(failed, error, after: delay))
        case .unreachable(let error, let retryAfter):
            let delay = retryAfter ?? Self.backoff(attempts: write.attempts)
            state.withLock { $0.retryDelay = delay }
            tell(.retrying(write, error, after: delay))
            return error
        }
        return nil
    }

    /// Whether the server answered: a failure status, or an answer that could not be read. No
    /// connection, a timeout, or a connection lost is no answer.
    private static func isAnswer(_ error: APIError) -> Bool {
        error.statusCode != nil || isUnreadable(error)
    }

    /// Whether the server answered with something that cannot be read as an answer.
    static func isUnreadable(_ error: APIError) -> Bool {
        [.decodingFailed, .invalidResponse, .inconsistentResponse, .responseTooLarge].contains(error.code)
    }

    private func storage() -> any OutboxStorage {
        state.withLock { $0.storage } ?? InMemoryOutboxStorage()
    }

    // MARK: - Committing

    /// Commits what the run settled in memory since its last commit — with `sequence`, only when
    /// that write's attempt is not noted yet, in one transaction with it and the attempts of the
    /// next writes likely to be sent (``notedAhead`` in all), so that they go without a commit of
    /// their own.
    ///
    /// - Throws: The storage's error; what was to be committed stays to be committed.
    private func commit(noting sequence: Int64? = nil) async throws {
        let (settling, removed, updated, notedBefore) = state.withLock {
            state -> (Unsettled, [Int64], [PendingWrite], [Int64: Int]) in
            let settling = state.unsettled
            var noting: [Int] = []
            if let sequence, let index = state.entries.firstIndex(where: { $0.write.sequence == sequence }),
                state.entries[index].noted <= state.entries[index].write.attempts
            {
                noting.append(index)
                for later in state.entries.indices where later != index {
                    guard noting.count < Self.notedAhead else { break }
                    if !state.entries[later].isParked, !state.entries[later].isSending, state.entries[later].isKept,
                        state.entries[later].noted <= state.entries[later].write.attempts
                    {
                        noting.append(later)
                    }
                }
            }
            // A write noted ahead goes without a commit: what is settled waits for the next one.
            guard sequence == nil ? !settling.isEmpty : !noting.isEmpty else { return (settling, [], [], [:]) }
            state.unsettled = Unsettled()
            var notedBefore: [Int64: Int] = [:]
            var updated: [PendingWrite] = []
            for index in noting {
                var write = state.entries[index].write
                notedBefore[write.sequence] = state.entries[index].noted
                write.attempts += 1
                state.entries[index].noted = write.attempts
                updated.append(write)
            }
            // Written as memory has them now, attempts begun included: a write noted ahead and not
            // sent is noted again before it goes.
            for index in state.entries.indices
            where settling.rewritten.contains(state.entries[index].write.sequence)
                && notedBefore[state.entries[index].write.sequence] == nil
            {
                notedBefore[state.entries[index].write.sequence] = state.entries[index].noted
                state.entries[index].noted = state.entries[index].write.attempts
                updated.append(state.entries[index].write)
            }
            return (settling, settling.removed.sorted(), updated, notedBefore)
        }
        guard !removed.isEmpty || !updated.isEmpty else { return }
        do {
            try await storage().settle(removing: removed, updating: updated)
        } catch {
            state.withLock { state in
                state.unsettled.formUnion(settling)
                for index in state.entries.indices {
                    if let noted = notedBefore[state.entries[index].write.sequence] {
                        state.entries[index].noted = noted
                    }
                }
            }
            throw error
        }
    }

    /// ``commit(noting:)`` where a failure is logged: the outbox's memory is ahead of storage
    /// until a later commit goes through, and after a crash writes the server took may be sent
    /// again under their keys.
    private func commitLogging() async {
        do {
            try await commit()
        } catch {
            let logger = state.withLock { $0.store?.configuration.logger }
            logger?.error(
                """
                the outbox could not write what the server answered to its storage: \(error); \
                it is tried again with the next commit, and after a crash writes the server took \
                are sent again with their Idempotency-Key
                """)
        }
    }

    /// The write went through: it leaves the outbox, a create's local id is replaced in later
    /// writes and their instances, and the next write of the record expects the answer's entity
    /// tag in `If-Match`. A create's or delete's confirmation is committed at once, with the
    /// rewritten writes; an update's with the next commit.
    private func confirm(
        _ entry: Entry, write: PendingWrite, newID: ResourceID?, etag: String?, in store: ResourceStore
    ) async {
        let local = entry.write.id.flatMap { $0.isLocal ? $0.description : nil }
        let record = WrittenRecord(entry.write)
        let instances = state.withLock { state -> [any ResourceModel] in
            if let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) {
                state.entries.remove(at: index)
            }
            state.unsettled.removed.insert(entry.write.sequence)
            var replacing: [String: ResourceID] = [:]
            if let local, let newID {
                state.replaced[local] = newID
                replacing[local] = newID
            }
            var instances: [any ResourceModel] = []
            var chained = false
            for index in state.entries.indices {
                // Without a local id to replace, only the record's next write can change.
                if chained, replacing.isEmpty { break }
                let isNextOfRecord = !chained && WrittenRecord(state.entries[index].write) == record
                guard isNextOfRecord || !replacing.isEmpty else { continue }
                var updated = state.entries[index].write.replacingLocalIDs(replacing)
                if isNextOfRecord {
                    chained = true
                    if updated.waitsForIfMatch {
                        updated.ifMatch = etag
                        updated.waitsForIfMatch = false
                    }
                }
                if updated != state.entries[index].write {
                    state.entries[index].write = updated
                    state.unsettled.rewritten.insert(updated.sequence)
                }
                if !replacing.isEmpty, let instance = state.entries[index].instance { instances.append(instance) }
            }
            return instances
        }
        if let local, let newID {
            for instance in instances { Self.replaceLocalIDs([local: newID], in: instance) }
        }
        // Sent again after a crash, a create the server took would make a second record on a
        // server that ignores Idempotency-Key.
        if entry.write.verb != .update { await commitLogging() }
        tell(.confirmed(write))
    }

    /// The record is gone from the server (`404`, `410`), or the write names a record whose create
    /// was discarded: it and the writes depending on it leave the outbox, each instance rolled back.
    private func reject(_ entry: Entry, _ error: APIError, in store: ResourceStore) async {
        let refused = state.withLock { state -> [(Entry, APIError)] in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) else {
                return []
            }
            let refused =
                [(entry, error)]
                + Self.dependents(of: index, in: state.entries).map { later in
                    (state.entries[later], Self.dependencyError(state.entries[later].write, on: entry.write, error))
                }
            let removed = Set(refused.map(\.0.write.sequence))
            state.entries.removeAll { removed.contains($0.write.sequence) }
            state.unsettled.removed.formUnion(removed)
            return refused
        }
        // Latest first, so each field ends at the server's state.
        let replays = state.withLock { $0.replays }
        for (entry, error) in refused.reversed() {
            replays[entry.write.model]?.rollBack(entry.write, entry: entry, error: error, in: store)
        }
        await commitLogging()
        for (entry, error) in refused { tell(.rejected(entry.write, error)) }
    }

    private static func dependencyError(_ write: PendingWrite, on cause: PendingWrite, _ error: APIError) -> APIError {
        APIError(
            .dependencyRejected,
            "\(write.model) write \(write.sequence) depends on write \(cause.sequence): \(error.message)",
            underlyingError: error)
    }

    /// Parks the write with this sequence, which depends on the parked write `behind`, with its
    /// dependents.
    private func park(_ sequence: Int64, behind: Int64, in store: ResourceStore) async {
        let entry = state.withLock { state in state.entries.first { $0.write.sequence == sequence } }
        guard let entry else { return }
        let write = entry.write
        await park(
            entry,
            APIError(
                .dependencyRejected, "\(write.model) write \(write.sequence) waits for write \(behind), which is parked"
            ),
            in: store)
    }

    /// Parks the write and the writes depending on it: kept, not sent, each instance showing its
    /// values unsaved with the error, as after a direct write's refusal.
    private func park(_ entry: Entry, _ error: APIError, in store: ResourceStore) async {
        let parked = state.withLock { state -> [(Entry, APIError)] in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) else {
                return []
            }
            state.entries[index].write = entry.write
            var parked = [(index, error)]
            for later in Self.dependents(of: index, in: state.entries) where !state.entries[later].isParked {
                parked.append((later, Self.dependencyError(state.entries[later].write, on: entry.write, error)))
            }
            return parked.map { index, error in
                state.entries[index].write.parking = PendingWrite.Parking(error)
                state.entries[index].notBefore = nil
                state.entries[index].failure = nil
                state.unsettled.rewritten.insert(state.entries[index].write.sequence)
                return (state.entries[index], error)
            }
        }
        let replays = state.withLock { $0.replays }
        for (entry, error) in parked.reversed() {
            replays[entry.write.model]?.park(entry.write, entry: entry, error: error, in: store)
        }
        await commitLogging()
        for (entry, error) in parked { tell(.parked(entry.write, error)) }
    }

    // MARK: - Parked writes

    /// Sends a parked write again as it is — same body, same `Idempotency-Key` — with the writes
    /// parked because of it; the instance shows its values pending again.
    ///
    /// - Parameter write: A write from ``parked``.
    /// - Throws: The storage's error; the write stays parked then.
    public func retry(_ write: PendingWrite) async throws {
        try open()
        let parked = state.withLock { state -> [Entry] in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence && $0.isParked })
            else { return [] }
            let indices =
                [index]
                + Self.dependents(of: index, in: state.entries).filter {
                    state.entries[$0].write.parking?.code == .dependencyRejected
                }
            return indices.map { state.entries[$0] }
        }
        guard !parked.isEmpty else { return }
        let resumed = parked.map { entry in
            var resumed = entry
            resumed.write.parking = nil
            resumed.write.failures = 0
            return resumed
        }
        // Stored first: a write is sent only as storage keeps it.
        try await storage().settle(removing: [], updating: resumed.map(\.write))
        let (replays, store) = state.withLock { state in
            for entry in resumed {
                if let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) {
                    state.entries[index] = entry
                }
            }
            return (state.replays, state.store)
        }
        guard let store else { return }
        for entry in resumed {
            replays[entry.write.model]?.resume(entry, in: store)
            tell(.queued(entry.write))
        }
        startAutomaticRun()
    }

    /// Drops a parked write and every write that depends on it, without sending them: each instance
    /// rolls back to the server's state (a record created only in the outbox leaves the store), with
    /// no error left.
    ///
    /// - Parameter write: A write from ``parked``.
    /// - Throws: The storage's error; the writes stay then.
    public func discard(_ write: PendingWrite) async throws {
        try open()
        let discarded = state.withLock { state -> [Entry] in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else {
                return []
            }
            return ([index] + Self.dependents(of: index, in: state.entries)).map { state.entries[$0] }
        }
        guard !discarded.isEmpty else { return }
        try await storage().settle(removing: discarded.map(\.write.sequence), updating: [])
        let removed = Set(discarded.map(\.write.sequence))
        state.withLock { state in state.entries.removeAll { removed.contains($0.write.sequence) } }
        let (replays, store) = state.withLock { ($0.replays, $0.store) }
        guard let store else { return }
        for entry in discarded.reversed() {
            replays[entry.write.model]?.discard(entry.write, entry: entry, in: store)
        }
        for entry in discarded { tell(.discarded(entry.write)) }
    }

    private static func replaceLocalIDs<Model: ResourceModel>(_ replaced: [String: ResourceID], in instance: Model) {
        let store = instance._$state.snapshot().store ?? .default
        instance._$state.replaceLocalIDs(
            replaced, of: instance, coder: FieldCoder(options: store.setup(for: Model.self).coding))
    }

    /// The record a write is about: writes of one record are sent in order.
    struct WrittenRecord: Hashable, Sendable {
        var model: String
        /// `1` and `"1"` are the same record, as in the identity map.
        var id: IdentityMap.Key.Normalized?

        init(model: String, id: ResourceID?) {
            self.model = model
            self.id = id.map(IdentityMap.Key.Normalized.init)
        }

        init(_ write: PendingWrite) {
            self.init(model: write.model, id: write.id)
        }
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
