import Observation

// A polymorphic reference (`@References(polymorphic: true) var subject: (any ResourceModel)?`) is
// two schema fields over two stored values: the id under the property's name, read and sent as
// `subject_id`, and the type name beside it, as `subject_type`. The type name is the related
// model's `polymorphicName` (its Swift class name unless it says otherwise), resolved back through
// the store's ``ModelRegistry``.

extension ResourceField {
    /// The id of a polymorphic reference: `subject_id`. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init(
        polymorphicID name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, ResourceID?> & Sendable,
        _ typeStorage: any WritableKeyPath<Model.FieldValues, String?> & Sendable,
        _ property: any KeyPath<Model, (any ResourceModel)?> & Sendable,
        key: String? = nil
    ) {
        /// The id, the type name and the store of an owner's reference, when it names a record.
        let target: @Sendable (Model) -> (id: ResourceID, typeName: String, store: ResourceStore)? = { owner in
            let (id, typeName, store) = owner._$state.state.withLock {
                ($0.values[keyPath: valuePath], $0.values[keyPath: typeStorage], $0.store ?? .default)
            }
            guard let id, let typeName else { return nil }
            return (id, typeName, store)
        }
        self.init(
            name, valuePath, property, key: key, defaultKey: { mapping, _ in mapping.wireKey(for: name) + "_id" },
            load: { owner in
                guard let (id, typeName, store) = target(owner) else { return }
                let type = try PolymorphicReference.model(named: typeName, for: Model.self, field: name, in: store)
                owner._$state.keep(
                    [try await PolymorphicReference.instance(of: type, id: id, in: store)], for: valuePath)
            },
            adopt: { owners, _ in
                for owner in owners {
                    guard let (id, typeName, store) = target(owner),
                        let type = try? PolymorphicReference.model(
                            named: typeName, for: Model.self, field: name, in: store),
                        let live = PolymorphicReference.liveInstance(of: type, id: id, in: store)
                    else { continue }
                    owner._$state.keep([live], for: valuePath)
                }
            },
            linkage: .polymorphicID(name: name),
            decode: { value, coder in try ResourceID.decodeOptional(value, coder) },
            encode: { value, _ in value?.jsonValue ?? .null },
            isEqual: { lhs, rhs, _ in lhs == rhs })
    }

    /// The type name of a polymorphic reference: `subject_type`. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init(
        polymorphicType name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, String?> & Sendable,
        _ property: any KeyPath<Model, (any ResourceModel)?> & Sendable
    ) {
        self.init(
            name + "Type", valuePath, property, key: nil,
            defaultKey: { mapping, _ in mapping.wireKey(for: name) + "_type" },
            linkage: .polymorphicType(name: name),
            decode: { value, coder in value.isNull ? nil : try coder.decode(String.self, from: value) },
            encode: { value, _ in value.map(JSONValue.string) ?? .null },
            isEqual: { lhs, rhs, _ in lhs == rhs })
    }
}

extension InstanceState {
    /// Reads a polymorphic reference: the instance this one keeps, else the live instance of the
    /// registered model its type names; `nil` when neither, never a request. Called by generated code.
    @_documentation(visibility: internal)
    public func polymorphic(
        _ valuePath: any KeyPath<Model.FieldValues, ResourceID?> & Sendable,
        type typeStorage: any KeyPath<Model.FieldValues, String?> & Sendable, of model: Model,
        property: any KeyPath<Model, (any ResourceModel)?> & Sendable
    ) -> (any ResourceModel)? {
        registrar.access(model, keyPath: property)
        let (id, typeName, store, kept) = state.withLock {
            (
                $0.values[keyPath: valuePath], $0.values[keyPath: typeStorage], $0.store ?? .default,
                $0.related[ValuePathKey(valuePath)]
            )
        }
        guard let id, let typeName else { return nil }
        if let match = kept?.first(where: {
            $0.id?.description == id.description && PolymorphicReference.typeName(of: $0) == typeName
        }) {
            return match
        }
        guard let type = try? PolymorphicReference.model(named: typeName, for: Model.self, field: "", in: store) else {
            return nil
        }
        return PolymorphicReference.liveInstance(of: type, id: id, in: store)
    }

    /// Writes a polymorphic reference: its type name and id, each an edit like any other. Called by
    /// generated code.
    @_documentation(visibility: internal)
    public func setPolymorphic(
        _ target: (any ResourceModel)?, for valuePath: any WritableKeyPath<Model.FieldValues, ResourceID?> & Sendable,
        type typeStorage: any WritableKeyPath<Model.FieldValues, String?> & Sendable, of model: Model,
        property: any KeyPath<Model, (any ResourceModel)?> & Sendable
    ) {
        setValue(target.map(PolymorphicReference.typeName(of:)), for: typeStorage, of: model, property: property)
        setValue(target?.id, for: valuePath, of: model, property: property)
        keep(target.map { [$0] } ?? [], for: valuePath)
    }
}

/// Opens the model types a polymorphic reference names.
enum PolymorphicReference {
    static func typeName(of instance: any ResourceModel) -> String {
        func name<Target: ResourceModel>(_ model: Target) -> String { Target.polymorphicName }
        return name(instance)
    }

    /// The registered model a type name denotes.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/invalidRequest`` naming the field and the name, when no registered
    ///   model has it.
    static func model<Owner: ResourceModel>(
        named typeName: String, for owner: Owner.Type, field: String, in store: ResourceStore
    ) throws -> any ResourceModel.Type {
        let models = store.setup(for: owner).models
        try models.checkUnambiguous(typeName)
        guard let type = models.model(named: typeName) else {
            throw APIError(
                .invalidRequest,
                "\(owner.resourceSchema.typeName).\(field) refers to a \"\(typeName)\", which no registered model is: "
                    + "register it with MonoRail.register(models:)")
        }
        return type
    }

    static func liveInstance(of type: any ResourceModel.Type, id: ResourceID, in store: ResourceStore)
        -> (any ResourceModel)?
    {
        func live<Target: ResourceModel>(_ type: Target.Type) -> (any ResourceModel)? {
            store.instance(of: type, id: id)
        }
        return live(type)
    }

    static func instance(of type: any ResourceModel.Type, id: ResourceID, in store: ResourceStore) async throws
        -> any ResourceModel
    {
        func fetch<Target: ResourceModel>(_ type: Target.Type) async throws -> any ResourceModel {
            if let live = store.instance(of: type, id: id) { return live }
            return try await type.get(id: id, in: store)
        }
        return try await fetch(type)
    }
}
