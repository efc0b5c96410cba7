import Atomics
import MonoRailTransport

/// Foreign key → instances: which live instances of a model hold a given id in a given field, so a
/// `@Has` read (`train.cars`) is a lookup rather than a scan of every live instance.
///
/// An index for a (model, field) pair is built on its first lookup, from the identity map, and then
/// kept up to date as instances change: the merger notes the instances it creates, and every change
/// it or a local edit makes is noted as it is announced. An entry can go stale when a field changes
/// to another id or its instance leaves the store; a lookup checks each candidate's current value and
/// that it is still the store's instance, and drops the stale ones, so it returns exactly the live
/// instances that hold the id now.
///
/// Each note returns the keys an instance moved in or out of — a car that joined or left a train's
/// cars — for ``RelationshipObservers`` to tell the observers of those relationships.
final class RelationshipIndex: Sendable {
    /// One field of one model.
    struct FieldKey: Hashable {
        let type: ObjectIdentifier
        let field: Int
    }

    /// The instances whose field holds one id: the members of the relationship of the record that id
    /// names. A change that adds or removes a member is reported as the key it moved in or out of.
    struct Key: Hashable {
        let field: FieldKey
        let id: IdentityMap.Key.Normalized
    }

    private struct WeakInstance {
        weak var object: (any ResourceModel)?
        init(_ object: any ResourceModel) { self.object = object }
    }

    /// Where an instance is in the index: the ids each of its indexed fields held when last noted.
    /// Kept so that a field that changes leaves its old key, and the relationship it left is told.
    private struct Located {
        weak var object: (any ResourceModel)?
        var ids: [Int: Set<IdentityMap.Key.Normalized>] = [:]
    }

    private struct State {
        /// The fields indexed, per model.
        var indexed: [ObjectIdentifier: Set<Int>] = [:]
        var buckets: [Key: [ObjectIdentifier: WeakInstance]] = [:]
        var located: [ObjectIdentifier: Located] = [:]
        /// `located` is swept of released instances when it doubles past this size.
        var sweepThreshold = 64
    }

    private let state = Locked(State())
    /// Merges that entered or changed instances and have not yet noted them here: their notes run
    /// once the identity map's lock is released, and a read between the two looks in the identity
    /// map instead.
    private let unnotedMerges = ManagedAtomic<Int>(0)

    /// Called by a merge, holding the identity map's lock, before it releases it with notes to take.
    func mergeWillNote() { unnotedMerges.wrappingIncrement(ordering: .sequentiallyConsistent) }

    /// Called by a merge once its notes are taken.
    func mergeNoted() { unnotedMerges.wrappingDecrement(ordering: .sequentiallyConsistent) }

    /// The live instances of `type` whose field `field` holds `id`, in id order.
    func instances<Target: ResourceModel>(
        of type: Target.Type, field: Int, is id: ResourceID, in store: ResourceStore
    ) -> [Target] {
        let fieldKey = FieldKey(type: ObjectIdentifier(type), field: field)
        let isBuilt = state.withLock { $0.indexed[fieldKey.type]?.contains(field) ?? false }
        if !isBuilt { build(fieldKey, of: type, in: store) }
        let key = Key(field: fieldKey, id: IdentityMap.Key.Normalized(id))
        // A merge beside this read may have entered instances it has not noted yet (a load sharing
        // another's request merges the same records and returns first): the identity map decides.
        let isScanning = unnotedMerges.load(ordering: .sequentiallyConsistent) > 0
        let candidates =
            isScanning
            ? store.identityMap.withLock { $0.instances(of: type) }
            : state.withLock { state in state.buckets[key]?.values.compactMap { $0.object as? Target } ?? [] }
        let coder = FieldCoder(options: store.setup(for: Target.self).coding)
        let fieldEntry = Target.resourceSchema.fields[field]
        // Only the store's live instances count: an instance can leave the identity map without
        // leaving the index.
        // A delete kept in the outbox takes the instance out of every relationship, as it does out of
        // every live list.
        let ids = candidates.map { candidate in
            candidate._$state.state.withLock { $0.isDeleted || $0.isDeletePending ? nil : $0.id }
        }
        let live = store.identityMap.withLock { map in
            zip(candidates, ids).map { candidate, id in id.map { map.instance(of: type, id: $0) === candidate } ?? false
            }
        }
        var matching: [Target] = []
        var stale: [ObjectIdentifier] = []
        for (candidate, isLive) in zip(candidates, live) {
            guard Self.foreignIDs(of: candidate, field: fieldEntry, coder: coder).contains(key.id) else {
                if !isScanning { stale.append(ObjectIdentifier(candidate)) }
                continue
            }
            // One not live is left where its notes put it: a merge running beside this read may be
            // about to insert it, and would not note it again; a released one leaves by itself.
            if isLive { matching.append(candidate) }
        }
        state.withLock { state in
            for identifier in stale {
                state.buckets[key]?[identifier] = nil
                // Its next note finds it new and places it again, wherever it is then.
                state.located[identifier] = nil
            }
            if state.buckets[key]?.values.contains(where: { $0.object == nil }) == true {
                state.buckets[key] = state.buckets[key]?.filter { $0.value.object != nil }
            }
        }
        return matching.sorted { lhs, rhs in
            switch (lhs.id, rhs.id) {
            case (.int(let a)?, .int(let b)?): a < b
            default: (lhs.id?.description ?? "") < (rhs.id?.description ?? "")
            }
        }
    }

    /// Whether any field of a model is indexed: until a `@Has` read asks, merges note nothing.
    func indexes<Model: ResourceModel>(_ type: Model.Type) -> Bool {
        state.withLock { $0.indexed[ObjectIdentifier(type)]?.isEmpty == false }
    }

    /// Notes the current values of `fields` of `instance` (every indexed one when `nil`, or when the
    /// instance is new to the index), and returns the keys it moved in or out of.
    @discardableResult
    func note<Model: ResourceModel>(_ instance: Model, fields: [Int]?, in store: ResourceStore) -> [Key] {
        let indexed = state.withLock { $0.indexed[ObjectIdentifier(Model.self)] }
        guard let indexed, !indexed.isEmpty else { return [] }
        let coder = FieldCoder(options: store.setup(for: Model.self).coding)
        let schemaFields = Model.resourceSchema.fields
        let identifier = ObjectIdentifier(instance)
        // The values are read under the index's lock so that two notes of one instance apply in the
        // order they read: the later one's ids are the ones it is located by.
        return state.withLock { state in
            var located = state.located[identifier] ?? Located()
            if located.object !== instance {
                // New to the index, or a released instance's entry under a reused address.
                Self.unlocate(&state, located, identifier: identifier)
                located = Located()
                located.object = instance
            }
            let isNew = located.ids.isEmpty
            let wanted = isNew ? indexed : fields.map { indexed.intersection($0) } ?? indexed
            var moved: [Key] = []
            for field in wanted {
                let fieldKey = FieldKey(type: ObjectIdentifier(Model.self), field: field)
                let now = Self.foreignIDs(of: instance, field: schemaFields[field], coder: coder)
                let before = located.ids[field] ?? []
                guard now != before else { continue }
                for id in before.subtracting(now) {
                    let key = Key(field: fieldKey, id: id)
                    state.buckets[key]?[identifier] = nil
                    moved.append(key)
                }
                for id in now.subtracting(before) {
                    let key = Key(field: fieldKey, id: id)
                    state.buckets[key, default: [:]][identifier] = WeakInstance(instance)
                    moved.append(key)
                }
                located.ids[field] = now
            }
            state.located[identifier] = located
            Self.sweepIfGrown(&state)
            return moved
        }
    }

    /// Takes an instance that left the store out of the index, and returns the keys it left.
    func remove(_ instance: some ResourceModel) -> [Key] {
        let identifier = ObjectIdentifier(instance)
        return state.withLock { state in
            guard let located = state.located[identifier], located.object === instance else { return [] }
            return Self.unlocate(&state, located, identifier: identifier)
        }
    }

    @discardableResult
    private static func unlocate(_ state: inout State, _ located: Located, identifier: ObjectIdentifier) -> [Key] {
        state.located[identifier] = nil
        guard let type = located.object.map({ ObjectIdentifier(type(of: $0)) }) else {
            // Released: its entries are no one's, and the lookups drop them.
            return []
        }
        var left: [Key] = []
        for (field, ids) in located.ids {
            for id in ids {
                let key = Key(field: FieldKey(type: type, field: field), id: id)
                state.buckets[key]?[identifier] = nil
                left.append(key)
            }
        }
        return left
    }

    private static func sweepIfGrown(_ state: inout State) {
        guard state.located.count >= state.sweepThreshold else { return }
        state.located = state.located.filter { $0.value.object != nil }
        state.sweepThreshold = max(64, state.located.count * 2)
    }

    /// Builds the index of one field from the live instances of its model.
    private func build<Target: ResourceModel>(_ fieldKey: FieldKey, of type: Target.Type, in store: ResourceStore) {
        // Marked first, so changes noted while the instances are read are not lost; an instance
        // noted twice is one entry.
        state.withLock { _ = $0.indexed[fieldKey.type, default: []].insert(fieldKey.field) }
        let coder = FieldCoder(options: store.setup(for: Target.self).coding)
        let field = Target.resourceSchema.fields[fieldKey.field]
        for instance in store.instances(of: type) {
            let identifier = ObjectIdentifier(instance)
            state.withLock { state in
                var located = state.located[identifier] ?? Located()
                guard located.object === instance || located.object == nil else { return }
                located.object = instance
                // Read under the lock, as a note reads, so a note that ran first is not undone.
                guard located.ids[fieldKey.field] == nil else {
                    state.located[identifier] = located
                    return
                }
                let ids = Self.foreignIDs(of: instance, field: field, coder: coder)
                for id in ids {
                    state.buckets[Key(field: fieldKey, id: id), default: [:]][identifier] = WeakInstance(instance)
                }
                located.ids[fieldKey.field] = ids
                state.located[identifier] = located
            }
        }
        state.withLock { Self.sweepIfGrown(&$0) }
    }

    /// The ids a field of an instance holds: none, one (`train_id`) or several (`car_ids`).
    private static func foreignIDs<Model: ResourceModel>(
        of instance: Model, field: ResourceField<Model>, coder: FieldCoder
    ) -> Set<IdentityMap.Key.Normalized> {
        let value = instance._$state.state.withLock { try? field.encode($0.values, coder) }
        switch value {
        case .array(let elements)?:
            return Set(elements.compactMap { ResourceID(json: $0).map(IdentityMap.Key.Normalized.init) })
        case let value?:
            return ResourceID(json: value).map { [IdentityMap.Key.Normalized($0)] } ?? []
        case nil:
            return []
        }
    }
}
