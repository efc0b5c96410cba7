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
final class RelationshipIndex: Sendable {
    private struct FieldKey: Hashable {
        let type: ObjectIdentifier
        let field: Int
    }

    private struct Key: Hashable {
        let field: FieldKey
        let id: IdentityMap.Key.Normalized
    }

    private struct WeakInstance {
        weak var object: (any ResourceModel)?
        init(_ object: any ResourceModel) { self.object = object }
    }

    private struct State {
        /// The fields indexed, per model.
        var indexed: [ObjectIdentifier: Set<Int>] = [:]
        var buckets: [Key: [ObjectIdentifier: WeakInstance]] = [:]
    }

    private let state = Locked(State())

    /// The live instances of `type` whose field `field` holds `id`, in id order.
    func instances<Target: ResourceModel>(
        of type: Target.Type, field: Int, is id: ResourceID, in store: ResourceStore
    ) -> [Target] {
        let fieldKey = FieldKey(type: ObjectIdentifier(type), field: field)
        let isBuilt = state.withLock { $0.indexed[fieldKey.type]?.contains(field) ?? false }
        if !isBuilt { build(fieldKey, of: type, in: store) }
        let key = Key(field: fieldKey, id: IdentityMap.Key.Normalized(id))
        let candidates = state.withLock { state in state.buckets[key]?.values.compactMap { $0.object as? Target } ?? []
        }
        let coder = FieldCoder(options: store.setup(for: Target.self).coding)
        let fieldEntry = Target.resourceSchema.fields[field]
        // Only the store's live instances count: a deleted one leaves the identity map but not
        // the index.
        let ids = candidates.map { $0._$state.state.withLock(\.id) }
        let live = store.identityMap.withLock { map in
            zip(candidates, ids).map { candidate, id in id.map { map.instance(of: type, id: $0) === candidate } ?? false
            }
        }
        var matching: [Target] = []
        var stale: [ObjectIdentifier] = []
        for (candidate, isLive) in zip(candidates, live) {
            if isLive, Self.foreignID(of: candidate, field: fieldEntry, coder: coder) == key.id {
                matching.append(candidate)
            } else {
                stale.append(ObjectIdentifier(candidate))
            }
        }
        state.withLock { state in
            for identifier in stale { state.buckets[key]?[identifier] = nil }
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

    /// Notes the current values of `fields` of `instance`, for the ones indexed.
    func note<Model: ResourceModel>(_ instance: Model, fields: [Int]?, in store: ResourceStore) {
        let indexed = state.withLock { $0.indexed[ObjectIdentifier(Model.self)] }
        guard let indexed, !indexed.isEmpty else { return }
        let wanted = fields.map { indexed.intersection($0) } ?? indexed
        guard !wanted.isEmpty else { return }
        let coder = FieldCoder(options: store.setup(for: Model.self).coding)
        let schemaFields = Model.resourceSchema.fields
        let keys = wanted.compactMap { field in
            Self.foreignID(of: instance, field: schemaFields[field], coder: coder).map {
                Key(field: FieldKey(type: ObjectIdentifier(Model.self), field: field), id: $0)
            }
        }
        guard !keys.isEmpty else { return }
        let entry = WeakInstance(instance)
        state.withLock { state in
            for key in keys { state.buckets[key, default: [:]][ObjectIdentifier(instance)] = entry }
        }
    }

    /// Builds the index of one field from the live instances of its model.
    private func build<Target: ResourceModel>(_ fieldKey: FieldKey, of type: Target.Type, in store: ResourceStore) {
        // Marked first, so changes noted while the instances are read are not lost; an instance
        // noted twice is one entry.
        state.withLock { _ = $0.indexed[fieldKey.type, default: []].insert(fieldKey.field) }
        let coder = FieldCoder(options: store.setup(for: Target.self).coding)
        let field = Target.resourceSchema.fields[fieldKey.field]
        var entries: [(Key, ObjectIdentifier, WeakInstance)] = []
        for instance in store.instances(of: type) {
            guard let id = Self.foreignID(of: instance, field: field, coder: coder) else { continue }
            entries.append((Key(field: fieldKey, id: id), ObjectIdentifier(instance), WeakInstance(instance)))
        }
        state.withLock { state in
            for (key, identifier, entry) in entries { state.buckets[key, default: [:]][identifier] = entry }
        }
    }

    /// The id a field of an instance holds, if it holds one.
    private static func foreignID<Model: ResourceModel>(
        of instance: Model, field: ResourceField<Model>, coder: FieldCoder
    ) -> IdentityMap.Key.Normalized? {
        let value = instance._$state.state.withLock { try? field.encode($0.values, coder) }
        return value.flatMap(ResourceID.init(json:)).map(IdentityMap.Key.Normalized.init)
    }
}
