import MonoRailTransport
import Observation

/// Who is told when a relationship changes without its own instance changing: `train.cars` when a
/// car joins or leaves the train, `car.train` when the train it names arrives in the store or leaves.
///
/// A relationship is registered here on its first read, which is also where Observation starts
/// watching it: nobody can be observing one that was never read. The relationship index reports the
/// keys a change moved an instance in or out of; each names an owner (the record the key's id names)
/// whose `@Has` relationships through that field are told. An instance arriving in the store or
/// leaving it tells the `@References` that name it. Telling is an Observation notification of the
/// relationship's property and a ``ResourceUpdate/Kind/related`` update.
final class RelationshipObservers: Sendable {
    /// Tells the relationships of one kind that the record `id` names.
    typealias Tell = @Sendable (IdentityMap.Key.Normalized, ResourceStore) -> Void

    private struct State {
        /// The relationships registered, by the value path of their property.
        var registered: Set<ValuePathKey> = []
        /// `@Has`: per field of the related model, the owners' relationships through it.
        var owners: [RelationshipIndex.FieldKey: [Tell]] = [:]
        /// `@References`: per related model, the relationships that name its records.
        var referrers: [ObjectIdentifier: [Tell]] = [:]
    }

    private let state = Locked(State())

    /// Registers a `@Has` relationship of `Owner`, read through `field` of `Target`, once.
    func watch<Owner: ResourceModel, Target: ResourceModel, Value>(
        has valuePath: any AnyKeyPath & Sendable, property: any KeyPath<Owner, Value> & Sendable,
        of owner: Owner.Type, through field: Int, of target: Target.Type
    ) {
        let key = ValuePathKey(valuePath)
        guard state.withLock({ !$0.registered.contains(key) }) else { return }
        let schema = Owner.resourceSchema
        let name =
            schema.indexByValuePath[key].map { schema.fields[$0].name }
            ?? schema.hasRelationships.first { ValuePathKey($0.valuePath) == key }?.name ?? ""
        let tell: Tell = { id, store in
            guard let owner = store.instance(of: Owner.self, id: id.resourceID) else { return }
            owner._$state.tellRelationship(name, property: property, of: owner)
        }
        let fieldKey = RelationshipIndex.FieldKey(type: ObjectIdentifier(Target.self), field: field)
        state.withLock { state in
            guard state.registered.insert(key).inserted else { return }
            state.owners[fieldKey, default: []].append(tell)
        }
    }

    /// Registers a `@References` relationship of `Owner`, whose `field` names records of `Target`,
    /// once.
    func watch<Owner: ResourceModel, Target: ResourceModel, Value>(
        references valuePath: any AnyKeyPath & Sendable, property: any KeyPath<Owner, Value> & Sendable,
        of owner: Owner.Type, field: Int, naming target: Target.Type
    ) {
        let key = ValuePathKey(valuePath)
        guard state.withLock({ !$0.registered.contains(key) }) else { return }
        let name = Owner.resourceSchema.fields[field].name
        let tell: Tell = { id, store in
            let referring = store.relationshipIndex.instances(
                of: Owner.self, field: field, is: id.resourceID, in: store)
            for owner in referring { owner._$state.tellRelationship(name, property: property, of: owner) }
        }
        state.withLock { state in
            guard state.registered.insert(key).inserted else { return }
            state.referrers[ObjectIdentifier(Target.self), default: []].append(tell)
        }
    }

    /// Whether some `@References` relationship names records of a model: its instances arriving and
    /// leaving must then be told even when nobody observes them.
    func isReferred<Model: ResourceModel>(_ type: Model.Type) -> Bool {
        state.withLock { $0.referrers[ObjectIdentifier(type)] != nil }
    }

    /// Tells the owners of the relationships the moved keys belong to.
    func tell(_ moved: [RelationshipIndex.Key], in store: ResourceStore) {
        guard !moved.isEmpty else { return }
        let tells = state.withLock { state in moved.map { state.owners[$0.field] ?? [] } }
        for (key, tells) in zip(moved, tells) {
            for tell in tells { tell(key.id, store) }
        }
    }

    /// Tells the relationships that name a record of `type` that it arrived or left.
    func tellReferrers<Model: ResourceModel>(of type: Model.Type, id: ResourceID, in store: ResourceStore) {
        let tells = state.withLock { $0.referrers[ObjectIdentifier(type)] }
        guard let tells else { return }
        let id = IdentityMap.Key.Normalized(id)
        for tell in tells { tell(id, store) }
    }
}

extension IdentityMap.Key.Normalized {
    var resourceID: ResourceID {
        switch self {
        case .int(let int): .int(int)
        case .string(let string): .string(string)
        }
    }
}

extension ResourceStore {
    /// Keeps the relationship index current with a change of `instance` and tells the relationships
    /// it moved: a car that joined or left a train tells that train's `cars`; a record that arrived
    /// (`created`) or left (`deleted`) tells the references that name it.
    func noteRelationships<Model: ResourceModel>(
        of instance: Model, kind: ResourceUpdate<Model>.Kind, fields: [Int]
    ) {
        let moved: [RelationshipIndex.Key]
        switch kind {
        case .deleted:
            moved = relationshipIndex.remove(instance)
        case .created:
            moved = relationshipIndex.note(instance, fields: nil, in: self)
        case .reverted:
            // A delete taken back brings the instance back to every relationship it was in.
            moved = relationshipIndex.note(instance, fields: fields.isEmpty ? nil : fields, in: self)
        case .merged, .edited, .related:
            moved = fields.isEmpty ? [] : relationshipIndex.note(instance, fields: fields, in: self)
        }
        relationshipObservers.tell(moved, in: self)
        guard kind == .created || kind == .deleted, let id = instance._$state.state.withLock(\.id) else { return }
        relationshipObservers.tellReferrers(of: Model.self, id: id, in: self)
    }
}

extension InstanceState {
    /// Tells the observers of a relationship of this instance that its members or target changed.
    func tellRelationship<Value>(_ name: String, property: any KeyPath<Model, Value> & Sendable, of model: Model) {
        let (store, updates) = state.withLock { ($0.store, $0.updates) }
        let registrar = registrarIfMade
        let perType = store?.broadcaster(for: Model.self)
        let streams = updates?.hasSubscribers == true || perType?.hasSubscribers == true
        guard registrar != nil || streams else { return }
        deliver(in: store) {
            registrar?.willSet(model, keyPath: property)
            registrar?.didSet(model, keyPath: property)
            guard streams else { return }
            let update = ResourceUpdate(kind: .related, fields: [name], instance: model)
            updates?.yield(update)
            perType?.yield(update)
        }
    }
}
