import Foundation

// Parked writes: a write the server refused, kept with the user's values until the app decides.
extension Outbox {
    /// Sends a parked write again as it is — same body, same `Idempotency-Key` — with the writes
    /// parked because of it; the instance shows its values pending again.
    ///
    /// - Parameter write: A write from ``parked``.
    /// - Throws: The storage's error; the write stays parked then.
    ///   ``/MonoRailClient/APIError/Code/invalidRequest`` for a write storage could not read back,
    ///   which can only be discarded.
    public func retry(_ write: PendingWrite) async throws {
        try open()
        if state.withLock({ $0.entries.contains { $0.write.sequence == write.sequence && $0.write.isUnreadable } }) {
            throw APIError(
                .invalidRequest,
                "kept write \(write.sequence) could not be read from storage and cannot be sent; discard(_:) removes it"
            )
        }
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

    static func replaceLocalIDs<Model: ResourceModel>(_ replaced: [String: ResourceID], in instance: Model) {
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
}
