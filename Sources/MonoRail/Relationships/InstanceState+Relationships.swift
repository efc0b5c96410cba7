import Observation
import Tracing

extension InstanceState {
    /// Keeps related instances alive for as long as this instance lives (after a load or an assignment).
    func keep(_ instances: [any ResourceModel], for valuePath: any AnyKeyPath & Sendable) {
        keep(instances, for: ValuePathKey(valuePath))
    }

    /// Keeps `instances` alive as the related records of the field at `key`.
    func keep(_ instances: [any ResourceModel], for key: ValuePathKey) {
        state.withLock { $0.related[key] = instances }
    }

    /// Reads a `@References` one. Called by generated code.
    ///
    /// Resolved from the identity map (the instances this one keeps stay there): `nil` when the
    /// related record is not loaded, was deleted or unloaded, never a request. Observers are told
    /// when the record it names arrives in the store or leaves it.
    @_documentation(visibility: internal)
    public func referenced<Target: ResourceModel>(
        _ valuePath: any KeyPath<Model.FieldValues, ResourceID?> & Sendable, of model: Model,
        property: any KeyPath<Model, Target?> & Sendable
    ) -> Target? {
        registrar.access(model, keyPath: property)
        let (id, store) = state.withLock { ($0.values[keyPath: valuePath], $0.store ?? .default) }
        watchReference(valuePath, property: property, naming: Target.self, in: store)
        guard let id else { return nil }
        return store.instance(of: Target.self, id: id)
    }

    /// Registers a `@References` read with the store's relationship observers.
    private func watchReference<Target: ResourceModel, Value>(
        _ valuePath: any AnyKeyPath & Sendable, property: any KeyPath<Model, Value> & Sendable,
        naming target: Target.Type, in store: ResourceStore
    ) {
        guard let field = Model.resourceSchema.indexByValuePath[ValuePathKey(valuePath)] else { return }
        store.relationshipObservers.watch(
            references: valuePath, property: property, of: Model.self, field: field, naming: Target.self)
    }

    /// Registers a `@Has` read through the related model's wire key `key` with the store's
    /// relationship observers.
    private func watchHas<Target: ResourceModel, Value>(
        _ valuePath: any AnyKeyPath & Sendable, property: any KeyPath<Model, Value> & Sendable,
        through key: String, of target: Target.Type, in store: ResourceStore
    ) {
        guard let field = store.setup(for: Target.self).wireKeys.firstIndex(of: key) else { return }
        store.relationshipObservers.watch(
            has: valuePath, property: property, of: Model.self, through: field, of: Target.self)
    }

    /// Writes a `@References` one: the id becomes the foreign key, an edit like any other. Called by
    /// generated code.
    public func setReferenced<Target: ResourceModel>(
        _ target: Target?, for valuePath: any WritableKeyPath<Model.FieldValues, ResourceID?> & Sendable,
        of model: Model, property: any KeyPath<Model, Target?> & Sendable
    ) {
        let id = target?.id
        setValue(id, for: valuePath, of: model, property: property)
        keep(target.map { [$0] } ?? [], for: valuePath)
    }

    /// Reads a `@References(.many)`. Called by generated code.
    @_documentation(visibility: internal)
    public func referencedMany<Target: ResourceModel>(
        _ valuePath: any KeyPath<Model.FieldValues, [ResourceID]> & Sendable, of model: Model,
        property: any KeyPath<Model, [Target]> & Sendable
    ) -> [Target] {
        registrar.access(model, keyPath: property)
        let (ids, store) = state.withLock { ($0.values[keyPath: valuePath], $0.store ?? .default) }
        watchReference(valuePath, property: property, naming: Target.self, in: store)
        return ids.compactMap { store.instance(of: Target.self, id: $0) }
    }

    /// Writes a `@References(.many)`. Called by generated code.
    @_documentation(visibility: internal)
    public func setReferencedMany<Target: ResourceModel>(
        _ targets: [Target], for valuePath: any WritableKeyPath<Model.FieldValues, [ResourceID]> & Sendable,
        of model: Model, property: any KeyPath<Model, [Target]> & Sendable
    ) {
        setValue(targets.compactMap(\.id), for: valuePath, of: model, property: property)
        keep(targets, for: valuePath)
    }

    /// Reads a `@Has(.many)`: the live instances whose foreign key names this instance, in id order.
    /// Called by generated code.
    ///
    /// Read from the identity map, so an instance created, moved or deleted elsewhere shows here with no
    /// request.
    @_documentation(visibility: internal)
    public func hasMany<Target: ResourceModel>(
        _ valuePath: any KeyPath<Model.FieldValues, [Target]> & Sendable, of model: Model,
        property: any KeyPath<Model, [Target]> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> [Target] {
        registrar.access(model, keyPath: property)
        let (id, store, kept) = state.withLock { ($0.id, $0.store ?? .default, $0.related[ValuePathKey(valuePath)]) }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        watchHas(valuePath, property: property, through: key, of: Target.self, in: store)
        guard let id else {
            // Not created yet: what was assigned, which points here once it is. The id's observers
            // are told when it is.
            registrar.access(model, keyPath: \.id)
            return kept?.compactMap { $0 as? Target } ?? []
        }
        guard store.setup(for: Target.self).wireKeys.contains(key) else {
            store.reportOnce(Self.missingKey(key, valuePath: valuePath, of: Target.self))
            return []
        }
        return store.instances(of: Target.self, whereKey: key, is: id)
    }

    /// Reads a `@Has(.one)`: the first live instance whose foreign key names this instance. Called by
    /// generated code.
    public func hasOne<Target: ResourceModel>(
        _ valuePath: any KeyPath<Model.FieldValues, [Target]> & Sendable, of model: Model,
        property: any KeyPath<Model, Target?> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> Target? {
        registrar.access(model, keyPath: property)
        let (id, store, kept) = state.withLock { ($0.id, $0.store ?? .default, $0.related[ValuePathKey(valuePath)]) }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        watchHas(valuePath, property: property, through: key, of: Target.self, in: store)
        guard let id else {
            registrar.access(model, keyPath: \.id)
            return kept?.first as? Target
        }
        guard store.setup(for: Target.self).wireKeys.contains(key) else {
            store.reportOnce(Self.missingKey(key, valuePath: valuePath, of: Target.self))
            return nil
        }
        return Self.latest(store.instances(of: Target.self, whereKey: key, is: id))
    }

    /// Reads a `@Has(.embedsMany)`: the embedded instances that still point at this instance, then any
    /// other live instance that does, so a car moved or created elsewhere shows with no request. When
    /// the related model has no foreign key to this one, the records as embedded. Called by generated
    /// code.
    public func embeddedMany<Target: ResourceModel>(
        _ valuePath: any KeyPath<Model.FieldValues, [Target]> & Sendable, of model: Model,
        property: any KeyPath<Model, [Target]> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> [Target] {
        registrar.access(model, keyPath: property)
        let (id, store, embedded) = state.withLock { ($0.id, $0.store ?? .default, $0.values[keyPath: valuePath]) }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        watchHas(valuePath, property: property, through: key, of: Target.self, in: store)
        guard let id, store.setup(for: Target.self).wireKeys.contains(key) else {
            return embedded
        }
        let pointing = store.instances(of: Target.self, whereKey: key, is: id)
        // Embedded records without the key belong here by their nesting; only a key naming another
        // record moves them out.
        let kept = embedded.filter { candidate in
            pointing.contains { $0 === candidate } || store.foreignKey(key, of: candidate) == nil
        }
        return kept + pointing.filter { candidate in !kept.contains { $0 === candidate } }
    }

    /// Reads a `@Has(.embedsOne)`, as ``embeddedMany(_:of:property:foreignKey:)`` reads many. Called
    /// by generated code.
    public func embeddedOne<Target: ResourceModel>(
        _ valuePath: any KeyPath<Model.FieldValues, Target?> & Sendable, of model: Model,
        property: any KeyPath<Model, Target?> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> Target? {
        registrar.access(model, keyPath: property)
        let (id, store, embedded) = state.withLock { ($0.id, $0.store ?? .default, $0.values[keyPath: valuePath]) }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        watchHas(valuePath, property: property, through: key, of: Target.self, in: store)
        guard let id, store.setup(for: Target.self).wireKeys.contains(key) else {
            return embedded
        }
        if let embedded, store.foreignKey(key, of: embedded) == nil { return embedded }
        return Self.latest(store.instances(of: Target.self, whereKey: key, is: id))
    }

    /// Of several instances pointing at one `@Has(.one)`, the one whose reference changed last.
    static func latest<Target: ResourceModel>(_ pointing: [Target]) -> Target? {
        pointing.max { lhs, rhs in
            lhs._$state.state.withLock(\.referenceStamp) < rhs._$state.state.withLock(\.referenceStamp)
        }
    }

    /// Writes a `@Has(.one)` or `@Has(.many)`: each assigned record's foreign key becomes this
    /// record's id, and each record that pointed here and is not assigned points nowhere, all as
    /// local edits of those records, which their own `save()` sends. Called by generated code.
    ///
    /// Until this record is created there is no id to point at: the assignment is kept, read back as
    /// assigned, and carried out when ``ResourceModel/create(in:id:uploadProgress:)`` succeeds.
    @_documentation(visibility: internal)
    public func setHas<Target: ResourceModel, Value>(
        _ targets: [Target], for valuePath: any WritableKeyPath<Model.FieldValues, [Target]> & Sendable,
        of model: Model, property: any KeyPath<Model, Value> & Sendable, foreignKey: String?,
        inverse: String? = nil
    ) {
        keep(targets, for: valuePath)
        let leaving = point(targets, at: model, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse)
        keepMembership(targets, leaving: leaving, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse)
        // The records it moved tell this relationship too, but an assignment to a record with no id
        // yet moves none.
        let name = Model.resourceSchema.hasRelationships.first {
            ValuePathKey($0.valuePath) == ValuePathKey(valuePath)
        }?.name
        tellRelationship(name ?? "", property: property, of: model)
    }

    /// Writes a `@Has(.embedsOne)` or `@Has(.embedsMany)`: the records become the embedded value
    /// (an edit of this record only when it sends them as nested attributes) and point here, as
    /// ``setHas(_:for:of:foreignKey:inverse:)``. Called by generated code.
    @_documentation(visibility: internal)
    public func setEmbedded<Target: ResourceModel, Value: Sendable>(
        _ value: Value, for valuePath: any WritableKeyPath<Model.FieldValues, Value> & Sendable, of model: Model,
        property: any KeyPath<Model, Value> & Sendable, foreignKey: String?, inverse: String? = nil,
        targets: [Target]
    ) {
        let index = Model.resourceSchema.indexByValuePath[ValuePathKey(valuePath)]
        if let index, Model.nestedAttributes.contains(Model.resourceSchema.fields[index].name) {
            setValue(value, for: valuePath, of: model, property: property)
        } else {
            // The children carry the relationship; this record has nothing new to send.
            let registrar = state.withLock { state in
                state.values[keyPath: valuePath] = value
                state.server[keyPath: valuePath] = value
                return state.madeRegistrar
            }
            registrar?.willSet(model, keyPath: property)
            registrar?.didSet(model, keyPath: property)
        }
        let leaving = point(targets, at: model, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse)
        if !(index.map { Model.nestedAttributes.contains(Model.resourceSchema.fields[$0].name) } ?? false) {
            keepMembership(targets, leaving: leaving, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse)
        }
    }

    /// Sets the foreign key of `targets` to this record's id, and clears it on the records that
    /// held it and are not among them, which it returns; deferred until this record has an id.
    @discardableResult
    func point<Target: ResourceModel>(
        _ targets: [Target], at model: Model, valuePath: any AnyKeyPath & Sendable, foreignKey: String?,
        inverse: String?
    ) -> [Target] {
        let (id, store) = state.withLock { state in
            if state.id == nil {
                state.pendingAssignments[ValuePathKey(valuePath)] = { owner in
                    owner._$state.point(
                        targets, at: owner, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse)
                }
            }
            return (state.id, state.store ?? .default)
        }
        guard let id else { return [] }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        let setup = store.setup(for: Target.self)
        guard let index = setup.wireKeys.firstIndex(of: key) else {
            // Nothing can point here: said, not ignored; the owner's save throws it.
            store.reportOnce(Self.missingKey(key, valuePath: valuePath, of: Target.self))
            return []
        }
        let coder = FieldCoder(options: setup.coding)
        let before = store.instances(of: Target.self, whereKey: key, is: id)
        for target in targets {
            target._$state.setWireValue(id.jsonValue, at: index, of: target, coder: coder)
        }
        let leaving = before.filter { candidate in !targets.contains { $0 === candidate } }
        for child in leaving {
            child._$state.setWireValue(.null, at: index, of: child, coder: coder)
        }
        return leaving
    }

    /// Carries out the `@Has` assignments made before this record had an id.
    func carryOutPendingAssignments(of model: Model) {
        let pending = state.withLock { state -> [@Sendable (Model) -> Void] in
            // A create the outbox kept has no id yet: its assignments keep waiting.
            guard state.id != nil, !state.pendingAssignments.isEmpty else { return [] }
            defer { state.pendingAssignments = [:] }
            return Array(state.pendingAssignments.values)
        }
        for assignment in pending { assignment(model) }
    }

    /// Gives a field the server's value `value` when it holds none and was not edited: what a record
    /// says by where it was read (`/trains/1/cars` names the train) rather than in its own fields.
    func adoptServerValue(_ value: JSONValue, at index: Int, of model: Model, coder: FieldCoder) {
        let field = Model.resourceSchema.fields[index]
        let adopted = state.withLock { state -> Bool in
            let isEdited = !state.edits.isEmpty && state.edits[index] != 0
            guard !isEdited, (try? field.encode(state.values, coder))?.isNull ?? false else { return false }
            var values = state.values
            guard (try? field.decode(&values, value, coder)) != nil else { return false }
            field.copy(&state.values, values)
            field.copy(&state.server, values)
            return true
        }
        guard adopted else { return }
        announce(.merged, fields: [index], of: model)
    }

    /// Gives a field the server's value `value`: what the instance shows too, unless the field is
    /// edited. What the server said of one relationship's membership, answering a request about it.
    func takeServerValue(_ value: JSONValue, at index: Int, of model: Model, coder: FieldCoder) throws {
        let field = Model.resourceSchema.fields[index]
        var decoded = state.withLock { $0.server }
        try field.decode(&decoded, value, coder)
        let shown = state.withLock { state -> Bool in
            field.copy(&state.server, decoded)
            let isEdited = !state.edits.isEmpty && state.edits[index] != 0
            guard !isEdited, !field.isEqual(state.values, decoded, coder) else { return false }
            field.copy(&state.values, decoded)
            return true
        }
        guard shown else { return }
        if let registrar = registrarIfMade { field.notify(model, registrar) }
        announce(.merged, fields: [index], of: model)
    }

    /// Sets one field from its wire form, as a local edit, when that changes it.
    func setWireValue(_ value: JSONValue, at index: Int, of model: Model, coder: FieldCoder) {
        let field = Model.resourceSchema.fields[index]
        let changed = state.withLock { state -> Bool in
            var values = state.values
            guard (try? field.decode(&values, value, coder)) != nil, !field.isEqual(values, state.values, coder) else {
                return false
            }
            field.copy(&state.values, values)
            Self.markEdited(index, in: &state)
            return true
        }
        guard changed else { return }
        if let registrar = registrarIfMade { field.notify(model, registrar) }
        announce(.edited, fields: [index], of: model)
    }
}

extension ResourceStore {
    /// The related model's key that names an owner: given, or the key of the `inverse` property, or
    /// the owner's singular name + `_id`.
    func foreignKey<Owner: ResourceModel, Target: ResourceModel>(
        _ explicit: String?, inverse: String?, from owner: Owner.Type, to target: Target.Type
    ) -> String {
        if let explicit { return explicit }
        if let inverse, let index = Target.resourceSchema.fields.firstIndex(where: { $0.name == inverse }) {
            return setup(for: Target.self).wireKeys[index]
        }
        return Owner.resourceName + "_id"
    }
    /// The id a record's wire key `key` holds, if the model has that key and it holds one.
    func foreignKey<Target: ResourceModel>(_ key: String, of target: Target) -> ResourceID? {
        let setup = setup(for: Target.self)
        guard let index = setup.wireKeys.firstIndex(of: key) else { return nil }
        let field = Target.resourceSchema.fields[index]
        let coder = FieldCoder(options: setup.coding)
        let value = target._$state.state.withLock { try? field.encode($0.values, coder) }
        return value.flatMap(ResourceID.init(json:))
    }

    /// The live instances of a model whose wire key `key` holds `id`, in id order: a lookup in the
    /// relationship index.
    func instances<Target: ResourceModel>(of type: Target.Type, whereKey key: String, is id: ResourceID) -> [Target] {
        guard let index = setup(for: Target.self).wireKeys.firstIndex(of: key) else { return [] }
        return relationshipIndex.instances(of: type, field: index, is: id, in: self)
    }
}

/// The projected value of a relationship property: `train.$cars`, `car.$train`.
///
/// ```swift
/// let cars = try await train.$cars.load()   // GET /cars?train_id=1
/// let train = try await car.$train.load()   // no request when train is already live
/// ```
public struct Related<Owner: ResourceModel, Value: Sendable>: Sendable {
    let owner: Owner
    let name: String
    let property: any KeyPath<Owner, Value> & Sendable

    /// Creates the handle. Called by generated code.
    @_documentation(visibility: internal)
    public init(owner: Owner, name: String, property: any KeyPath<Owner, Value> & Sendable) {
        self.owner = owner
        self.name = name
        self.property = property
    }

    /// The related records as loaded so far; never a request.
    public var value: Value { owner[keyPath: property] }

    /// Loads or reloads the related records and returns them.
    ///
    /// References resolve from the identity map with no request when the record is live; `@Has`
    /// relationships fetch the index filtered by the foreign key; embedded ones re-fetch the owner.
    /// Concurrent loads of the same relationship share one request.
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as the request it makes.
    @discardableResult
    public func load() async throws -> Value {
        guard let loader = Owner.resourceSchema.loader(named: name) else {
            throw APIError(.invalidRequest, "\(Owner.resourceSchema.typeName).\(name) is not a relationship")
        }
        let setup = owner._$state.state.withLock { $0.store ?? .default }.setup(for: Owner.self)
        var attributes: SpanAttributes = ["monorail.model": "\(setup.typeName)", "monorail.relationship": "\(name)"]
        if let id = owner.id { attributes["monorail.record.id"] = id.description }
        try await setup.client.telemetry.withSpan(
            "\(setup.typeName).\(name).load", attributes: attributes
        ) { _ in
            try await loader(owner)
        }
        return owner[keyPath: property]
    }
}
