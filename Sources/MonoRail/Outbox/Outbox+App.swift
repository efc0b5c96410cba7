import Foundation
import Observation

// What an app asks of the outbox: what is pending, its events, flushing, pausing, clearing.
extension Outbox {
    /// The number of writes kept to be sent: every one not yet answered by the server, except the
    /// ``parked`` ones.
    ///
    /// Reading it does no I/O, so a SwiftUI `body` may show it: the writes earlier launches kept
    /// are read from storage once, off the reader's thread, and counted when they are in
    /// (``isLoaded``); the count is observable, so a view shows them then. To wait for them,
    /// `try await outbox.load()`.
    public var pendingCount: Int {
        accessEntries(\.pendingCount)
        return state.withLock { $0.entries.count { !$0.isParked } }
    }

    /// The writes kept to be sent, in the order they will be sent. Observable, and read without
    /// I/O, as ``pendingCount`` is.
    public var pending: [PendingWrite] {
        accessEntries(\.pending)
        return state.withLock { $0.entries.filter { !$0.isParked }.map(\.write) }
    }

    /// The writes the outbox stopped sending, in the order they were made, each with why
    /// (``PendingWrite/parking``): until the app saves the record again, ``retry(_:)`` or
    /// ``discard(_:)``. Observable, and read without I/O, as ``pendingCount`` is.
    ///
    /// ```swift
    /// for write in store.outbox.parked {
    ///     print(write.model, write.id, write.parking?.message ?? "")
    /// }
    /// ```
    public var parked: [PendingWrite] {
        accessEntries(\.parked)
        return state.withLock { $0.entries.filter(\.isParked).map(\.write) }
    }

    /// Whether the writes earlier launches kept have been read from storage: until then
    /// ``pendingCount``, ``pending`` and ``parked`` tell only this launch's. Observable.
    public var isLoaded: Bool {
        accessEntries(\.isLoaded)
        return state.withLock { $0.isOpen }
    }

    /// Notes an observer's read of what the outbox holds, and starts reading the kept writes from
    /// storage, off the reader's thread, when nothing has yet.
    private func accessEntries<Value>(_ keyPath: KeyPath<Outbox, Value>) {
        registrar.access(self, keyPath: keyPath)
        let starts = state.withLock { state in
            defer { state.isOpening = true }
            return !state.isOpen && !state.isOpening
        }
        guard starts else { return }
        Task.detached(priority: .userInitiated) { [weak self] in
            guard let self else { return }
            self.openForReading()
            self.state.withLock { $0.isOpening = false }
        }
    }

    /// What happens to writes from now on: kept, sent, confirmed, retrying, parked, discarded,
    /// rejected.
    public var events: AsyncStream<OutboxEvent> { broadcaster.stream() }

    /// Tells the ``events`` streams, where the store's ``MonoRail/Configuration/delivery`` says.
    func tell(_ event: OutboxEvent) {
        settleFate(of: event)
        entriesChanged()
        guard broadcaster.hasSubscribers else { return }
        announcer.announce { [broadcaster] in broadcaster.yield(event) }
    }

    /// Settles the fate of a write that ended: taken, refused, parked or discarded.
    private func settleFate(of event: OutboxEvent) {
        let ended: (PendingWrite, Result<Void, APIError>)? =
            switch event {
            case .confirmed(let write): (write, .success(()))
            case .rejected(let write, let error), .parked(let write, let error): (write, .failure(error))
            case .discarded(let write):
                (write, .failure(APIError(.cancelled, "the app discarded the write (or one it waited for) unsent")))
            case .queued, .sent, .retrying, .waitingForToken: nil
            }
        guard let (write, result) = ended,
            let fate = state.withLock({ $0.fates.removeValue(forKey: write.sequence) })
        else { return }
        fate.settle(result)
    }

    /// Tells the observers of what the outbox holds (``pendingCount``, ``pending``, ``parked``,
    /// ``isLoaded``), where the store's delivery says, and sets the gauges: every change of a write
    /// calls it.
    func entriesChanged() {
        announcer.announce { [registrar] in
            registrar.willSet(self, keyPath: \.pendingCount)
            registrar.willSet(self, keyPath: \.pending)
            registrar.willSet(self, keyPath: \.parked)
            registrar.willSet(self, keyPath: \.isLoaded)
            registrar.didSet(self, keyPath: \.pendingCount)
            registrar.didSet(self, keyPath: \.pending)
            registrar.didSet(self, keyPath: \.parked)
            registrar.didSet(self, keyPath: \.isLoaded)
        }
        measure()
    }

    /// Sets the outbox's gauges, when the store measures: `monorail.outbox.depth` (writes to send),
    /// `monorail.outbox.parked`, and `monorail.outbox.oldest_age` (seconds since the oldest write
    /// to send was kept).
    private func measure() {
        guard let store = state.withLock({ $0.store }) else { return }
        let telemetry = store.client.telemetry
        guard telemetry.metricsFactory != nil else { return }
        let (depth, parked, oldest) = state.withLock { state -> (Int, Int, Date?) in
            var depth = 0
            var oldest: Date?
            for entry in state.entries where !entry.isParked {
                depth += 1
                oldest = min(oldest ?? entry.write.createdAt, entry.write.createdAt)
            }
            return (depth, state.entries.count - depth, oldest)
        }
        telemetry.set("monorail.outbox.depth", [], to: Double(depth))
        telemetry.set("monorail.outbox.parked", [], to: Double(parked))
        telemetry.set("monorail.outbox.oldest_age", [], to: oldest.map { max(0, Date().timeIntervalSince($0)) } ?? 0)
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
        let fates = state.withLock { state in
            defer { state.fates = [:] }
            return state.fates.values
        }
        for fate in fates {
            fate.settle(
                .failure(APIError(.cancelled, "the outbox discarded every kept write (sign-out) before this was sent")))
        }
        entriesChanged()
        try await storage().settle(removing: discarded.map(\.write.sequence), updating: [])
    }

    private static func forgetPending<Model: ResourceModel>(_ instance: Model) {
        instance._$state.state.withLock { state in
            state.pending = []
            state.isDeletePending = false
        }
    }
}
