import Observation

extension InstanceState {
    /// Keeps related instances alive for as long as this instance lives (after a load or an assignment).
    func keep(_ instances: [any ResourceModel], for storage: any AnyKeyPath & Sendable) {
        state.withLock { $0.related[StorageKey(storage)] = instances }
    }

    /// Reads a `@References` one. Called by generated code.
    ///
    /// Resolved from the instances this one keeps, then from the identity map; `nil` when the
    /// related record is not loaded, never a request.
    @_documentation(visibility: internal)
    public func referenced<Target: ResourceModel>(
        _ storage: any KeyPath<Model.FieldValues, ResourceID?> & Sendable, of model: Model,
        property: any KeyPath<Model, Target?> & Sendable
    ) -> Target? {
        registrar.access(model, keyPath: property)
        let (id, store, kept) = state.withLock {
            ($0.values[keyPath: storage], $0.store ?? .default, $0.related[StorageKey(storage)])
        }
        guard let id else { return nil }
        if let match = kept?.first(where: { $0.id?.description == id.description }) as? Target { return match }
        return store.instance(of: Target.self, id: id)
    }

    /// Writes a `@References` one: the id becomes the foreign key, an edit like any other. Called by
    /// generated code.
    public func setReferenced<Target: ResourceModel>(
        _ target: Target?, for storage: any WritableKeyPath<Model.FieldValues, ResourceID?> & Sendable,
        of model: Model, property: any KeyPath<Model, Target?> & Sendable
    ) {
        let id = target?.id
        setValue(id, for: storage, of: model, property: property)
        keep(target.map { [$0] } ?? [], for: storage)
    }

    /// Reads a `@References(.many)`. Called by generated code.
    @_documentation(visibility: internal)
    public func referencedMany<Target: ResourceModel>(
        _ storage: any KeyPath<Model.FieldValues, [ResourceID]> & Sendable, of model: Model,
        property: any KeyPath<Model, [Target]> & Sendable
    ) -> [Target] {
        registrar.access(model, keyPath: property)
        let (ids, store, kept) = state.withLock {
            ($0.values[keyPath: storage], $0.store ?? .default, $0.related[StorageKey(storage)] ?? [])
        }
        return ids.compactMap { id in
            if let match = kept.first(where: { $0.id?.description == id.description }) as? Target { return match }
            return store.instance(of: Target.self, id: id)
        }
    }

    /// Writes a `@References(.many)`. Called by generated code.
    @_documentation(visibility: internal)
    public func setReferencedMany<Target: ResourceModel>(
        _ targets: [Target], for storage: any WritableKeyPath<Model.FieldValues, [ResourceID]> & Sendable,
        of model: Model, property: any KeyPath<Model, [Target]> & Sendable
    ) {
        setValue(targets.compactMap(\.id), for: storage, of: model, property: property)
        keep(targets, for: storage)
    }

    /// Reads a `@Has(.many)`: the live instances whose foreign key names this instance, in id order.
    /// Called by generated code.
    ///
    /// Read from the identity map, so an instance created, moved or deleted elsewhere shows here with no
    /// request.
    @_documentation(visibility: internal)
    public func hasMany<Target: ResourceModel>(
        _ storage: any KeyPath<Model.FieldValues, [Target]> & Sendable, of model: Model,
        property: any KeyPath<Model, [Target]> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> [Target] {
        registrar.access(model, keyPath: property)
        let (id, store) = state.withLock { ($0.id, $0.store ?? .default) }
        guard let id else { return [] }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        return store.instances(of: Target.self, whereKey: key, is: id)
    }

    /// Reads a `@Has(.one)`: the first live instance whose foreign key names this instance. Called by
    /// generated code.
    public func hasOne<Target: ResourceModel>(
        _ storage: any KeyPath<Model.FieldValues, [Target]> & Sendable, of model: Model,
        property: any KeyPath<Model, Target?> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> Target? {
        registrar.access(model, keyPath: property)
        let (id, store) = state.withLock { ($0.id, $0.store ?? .default) }
        guard let id else { return nil }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        return Self.latest(store.instances(of: Target.self, whereKey: key, is: id))
    }

    /// Reads a `@Has(.embedsMany)`: the embedded instances that still point at this instance, then any
    /// other live instance that does, so a car moved or created elsewhere shows with no request. When
    /// the related model has no foreign key to this one, the records as embedded. Called by generated
    /// code.
    public func embeddedMany<Target: ResourceModel>(
        _ storage: any KeyPath<Model.FieldValues, [Target]> & Sendable, of model: Model,
        property: any KeyPath<Model, [Target]> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> [Target] {
        registrar.access(model, keyPath: property)
        let (id, store, embedded) = state.withLock { ($0.id, $0.store ?? .default, $0.values[keyPath: storage]) }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
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
        _ storage: any KeyPath<Model.FieldValues, Target?> & Sendable, of model: Model,
        property: any KeyPath<Model, Target?> & Sendable, foreignKey: String?, inverse: String? = nil
    ) -> Target? {
        registrar.access(model, keyPath: property)
        let (id, store, embedded) = state.withLock { ($0.id, $0.store ?? .default, $0.values[keyPath: storage]) }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
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

    /// Writes a `@Has`: the instances are kept alive; their own foreign keys decide what reads return.
    /// Called by generated code.
    @_documentation(visibility: internal)
    public func setHas<Target: ResourceModel>(
        _ targets: [Target], for storage: any WritableKeyPath<Model.FieldValues, [Target]> & Sendable,
        of model: Model
    ) {
        keep(targets, for: storage)
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
    /// - Throws: ``APIError``, as the request it makes.
    @discardableResult
    public func load() async throws -> Value {
        guard let loader = Owner.resourceSchema.loader(named: name) else {
            throw APIError(.invalidRequest, "\(Owner.resourceSchema.typeName).\(name) is not a relationship")
        }
        try await loader(owner)
        return owner[keyPath: property]
    }
}
