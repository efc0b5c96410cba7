import Foundation
import Logging

// Opening: the kept writes read back from storage when a write or a replay first needs them.
extension Outbox {
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
        entriesChanged()
    }

    /// ``open()`` for what the app reads without waiting: a storage that cannot be read is logged,
    /// and the writes this process kept are what there is.
    func openForReading() {
        do {
            try open()
        } catch {
            let logger = state.withLock { $0.store?.configuration.logger }
            logger?.error("the outbox's kept writes could not be read: \(error); only this launch's are counted")
        }
    }

    static func storage(for store: ResourceStore?) -> any OutboxStorage {
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
            // A write storage could not read has nothing to show; it waits, parked, for discard().
            let writes = state.entries.filter {
                $0.write.model == Model.resourceName && $0.instance == nil && !$0.write.isUnreadable
            }
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
}
