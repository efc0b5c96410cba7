import Foundation

extension ResourceStore {
    // MARK: - Keeping and forgetting records

    /// Keeps an instance alive in the store, and its record in the cache, until ``unpin(_:)``: a
    /// pinned record is never evicted to make room, and the instance is the one every read returns
    /// even when the app holds it nowhere else.
    ///
    /// ```swift
    /// try await ResourceStore.default.pin(currentUser)
    /// ```
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/notPersisted`` for an instance without an id; what the storage
    ///   throws.
    public func pin<Model: ResourceModel>(_ instance: Model) async throws {
        let key = try cacheKey(of: instance, toward: "pin")
        pinned.withLock { $0[IdentityMap.Key(type: ObjectIdentifier(Model.self), id: key.id)] = instance }
        try await setup(for: Model.self).storage?.setPinned(true, [key.record])
    }

    /// Lets a pinned instance go, and its record be evicted again.
    ///
    /// - Throws: What the storage throws.
    public func unpin<Model: ResourceModel>(_ instance: Model) async throws {
        guard let key = try? cacheKey(of: instance, toward: "unpin") else { return }
        _ = pinned.withLock { $0.removeValue(forKey: IdentityMap.Key(type: ObjectIdentifier(Model.self), id: key.id)) }
        try await setup(for: Model.self).storage?.setPinned(false, [key.record])
    }

    /// Forgets one record locally — not on the server: the identity map lets the instance go, a pin
    /// is dropped, and the record cache (memory and disk) forgets the record. The instance keeps its
    /// values; the next read of the record makes a new one. The relationships it was in are told:
    /// an unloaded car leaves `train.cars`, and `car.train` of an unloaded train reads `nil`.
    ///
    /// - Throws: What the storage throws.
    public func unload<Model: ResourceModel>(_ instance: Model) async throws {
        guard let id = instance._$state.state.withLock({ $0.id }) else { return }
        let key = IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id)
        _ = pinned.withLock { $0.removeValue(forKey: key) }
        identityMap.withLock { $0.remove(key, ifHolding: instance) }
        noteRelationships(of: instance, kind: .deleted, fields: [])
        try await setup(for: Model.self).storage?.remove([RecordKey(model: Model.resourceName, id: id)])
    }

    /// Notes records of a model the server deleted, heard of at `order` (a fresh stamp's when `nil`):
    /// an answer asked for before then that still holds one is older than the deletion, and does not
    /// bring the record back.
    func noteGone<Model: ResourceModel>(_ type: Model.Type, ids: [ResourceID], heardAt order: Int64? = nil) {
        guard !ids.isEmpty else { return }
        let order = order ?? stamp().order
        let identifier = ObjectIdentifier(type)
        identityMap.withLock { map in
            for id in ids { map.noteDeleted(IdentityMap.Key(type: identifier, id: id), at: order) }
        }
    }

    /// A record the server no longer has — pruned from a list, destroyed by a push, gone after a
    /// reset: its instance leaves the identity map and is marked deleted, and its observers and live
    /// queries are told, once.
    func noteDeletedOnServer<Model: ResourceModel>(_ instance: Model, id: ResourceID) {
        remove(instance, id: id)
        let wasDeleted = instance._$state.state.withLock { state in
            defer { state.isDeleted = true }
            return state.isDeleted
        }
        if !wasDeleted { instance._$state.announce(.deleted, fields: [], of: instance) }
    }

    /// Forgets every record of a model locally, as ``unload(_:)`` forgets one, cached lists included.
    ///
    /// - Throws: What the storage throws.
    public func unloadAll<Model: ResourceModel>(_ type: Model.Type) async throws {
        let identifier = ObjectIdentifier(type)
        pinned.withLock { $0 = $0.filter { $0.key.type != identifier } }
        let unloaded = identityMap.withLock { map in
            defer {
                map.removeAll(of: type)
                map.setSingleton(nil, of: type)
            }
            return map.instances(of: type)
        }
        for instance in unloaded { noteRelationships(of: instance, kind: .deleted, fields: []) }
        try await setup(for: type).storage?.removeAll(model: Model.resourceName)
    }

    /// Forgets everything this store knows, for sign-out: every instance leaves the identity map,
    /// pins are dropped, the outbox's kept writes are discarded unsent (``Outbox/discardAll()``; flush
    /// it first to send them), and the record cache and the file cache of the configuration (and of
    /// any model that configured its own) are emptied, on disk too, so that none of it can be read back.
    ///
    /// ```swift
    /// try await ResourceStore.default.clear()
    /// ```
    ///
    /// Instances the app still holds are emptied and marked deleted (``ResourceModel/isDeleted``):
    /// they hold none of the last account's values — fields back to a new instance's, no id, no
    /// edits, errors or related instances — and their observers and update streams are told. They
    /// are no longer the store's: the next read makes new ones. The ``liveUpdates`` stream is
    /// closed and its cursor forgotten: connected again, it starts from now.
    ///
    /// **A fence.** Whatever was begun before the clear and finishes after it — a read, a query's
    /// refresh or next page, an outbox write's answer, a pushed change — is dropped when it arrives:
    /// neither merged into the new account's instances nor kept in storage, and no cursor of the
    /// last account's stream is kept. Such a read throws ``/MonoRailClient/APIError/Code/cancelled``.
    ///
    /// - Throws: What a storage throws; every storage is asked to clear even when one fails.
    public func clear() async throws {
        let (storages, fileCaches) = settings.withLock { state -> ([any RecordCache], [FileCache]) in
            var storages: [any RecordCache] = state.configuration.storage.map { [$0] } ?? []
            var fileCaches: [FileCache] = state.configuration.fileCache.map { [$0] } ?? []
            for entry in state.setups.values {
                guard let setup = entry.setup as? any ModelSetupStorage else { continue }
                if let storage = setup.storage, !storages.contains(where: { $0 === storage }) {
                    storages.append(storage)
                }
                if let cache = setup.fileCache, !fileCaches.contains(where: { $0 === cache }) {
                    fileCaches.append(cache)
                }
            }
            return (storages, fileCaches)
        }
        let released = pinned.withLock { pinned in
            defer { pinned = [:] }
            return pinned
        }
        // A new generation: what was asked for before this stamp is dropped when it answers.
        let fence = stamp()
        let map = identityMap.withLock { map in
            defer {
                map = IdentityMap()
                map.fence = fence.order
            }
            return map
        }
        for instance in map.allInstances { Self.empty(instance) }
        // The stream would go on bringing the signed-out user's records.
        if let live = liveUpdatesIfMade {
            live.disconnect()
            live.forgetCursor()
        }
        // Released outside the locks: a model's deinit may run.
        _ = (released, map)
        for cache in fileCaches { cache.removeAll() }
        // Writes to storage of answers from before the fence finish first; the clears below erase them.
        await signOutFence.close(at: fence)
        var failure: (any Error)?
        do {
            try await outbox.discardAll()
        } catch {
            failure = error
        }
        for storage in storages {
            do { try await storage.clear() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    private static func empty<Model: ResourceModel>(_ instance: Model) {
        instance._$state.empty(of: instance)
    }

    private func cacheKey<Model: ResourceModel>(of instance: Model, toward action: String) throws
        -> (id: ResourceID, record: RecordKey)
    {
        guard let id = instance._$state.state.withLock({ $0.id }) else {
            throw APIError(
                .notPersisted, "cannot \(action) a \(Model.resourceSchema.typeName) that has no id")
        }
        return (id, RecordKey(model: Model.resourceName, id: id))
    }
}

/// What ``ResourceStore/clear()`` needs of a model's setup without knowing its model.
protocol ModelSetupStorage {
    var storage: (any RecordCache)? { get }
    var fileCache: FileCache? { get }
}

extension ModelSetup: ModelSetupStorage {}
