extension ResourceField {
    /// A `@References` field holding one id: `train_id`. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init<Target: ResourceModel>(
        reference name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, ResourceID?> & Sendable,
        _ property: any KeyPath<Model, Target?> & Sendable,
        key: String? = nil
    ) {
        self.init(
            name, valuePath, property, key: key, defaultKey: { mapping, _ in mapping.wireKey(for: name) + "_id" },
            related: .of(Target.self), load: Self.referenceLoader(valuePath, Target.self),
            adopt: { owners, store in
                // Index loops: generic over the model, a sequence's iterator costs type metadata
                // look-ups for every owner.
                var ids: [ResourceID?] = []
                ids.reserveCapacity(owners.count)
                for index in 0..<owners.count {
                    ids.append(owners[index]._$state.state.withLock { $0.values[keyPath: valuePath] })
                }
                let live = store.liveInstances(of: ObjectIdentifier(Target.self), ids: ids)
                let key = ValuePathKey(valuePath)
                for index in 0..<owners.count {
                    if let target = live[index] { owners[index]._$state.keep([target], for: key) }
                }
            },
            linkage: .one(name: name),
            decode: { value, coder in try ResourceID.decodeOptional(value, coder) },
            encode: { value, _ in value?.jsonValue ?? .null },
            isEqual: { lhs, rhs, _ in lhs == rhs })
    }

    /// A `@References(.many)` field holding ids: `train_ids`, or `trains` by the conventions'
    /// ``ServerConventions/referenceIDsKey``. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init<Target: ResourceModel>(
        references name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, [ResourceID]> & Sendable,
        _ property: any KeyPath<Model, [Target]> & Sendable,
        key: String? = nil
    ) {
        self.init(
            name, valuePath, property, key: key,
            defaultKey: Self.referenceIDsKey(name),
            related: .of(Target.self), load: Self.referencesLoader(valuePath, Target.self),
            adopt: { owners, store in
                var lists: [[ResourceID]] = []
                lists.reserveCapacity(owners.count)
                for index in 0..<owners.count {
                    lists.append(owners[index]._$state.state.withLock { $0.values[keyPath: valuePath] })
                }
                let live = store.liveInstances(of: ObjectIdentifier(Target.self), lists: lists)
                let key = ValuePathKey(valuePath)
                for index in 0..<owners.count where !live[index].isEmpty {
                    owners[index]._$state.keep(live[index], for: key)
                }
            },
            linkage: .many(name: name),
            decode: { value, coder in try ResourceID.decodeList(value, coder) },
            encode: { value, _ in .array(value.map(\.jsonValue)) },
            isEqual: { lhs, rhs, _ in lhs == rhs })
    }

    /// A `@Has(.embedsOne)` field. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init<Target: ResourceModel>(
        embedding name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, Target?> & Sendable,
        _ property: any KeyPath<Model, Target?> & Sendable,
        key: String? = nil
    ) {
        self.init(name, embeddingOne: valuePath, property, key: key, reference: nil)
    }

    /// A `@References(.embedsOne)` field: read embedded, sent back as its id. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init<Target: ResourceModel>(
        embeddedReference name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, Target?> & Sendable,
        _ property: any KeyPath<Model, Target?> & Sendable,
        key: String? = nil,
        idKey: String? = nil
    ) {
        let reference = EmbeddedReference<Model>(
            key: idKey, defaultKey: { mapping, _ in mapping.wireKey(for: name) + "_id" },
            ids: { values in
                guard let target = values[keyPath: valuePath] else { return .null }
                return try EmbeddedReference<Model>.id(of: target, field: name)
            })
        self.init(name, embeddingOne: valuePath, property, key: key, reference: reference)
    }

    /// A `@Has(.embedsMany)` field. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init<Target: ResourceModel>(
        embedding name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, [Target]> & Sendable,
        _ property: any KeyPath<Model, [Target]> & Sendable,
        key: String? = nil
    ) {
        self.init(name, embeddingMany: valuePath, property, key: key, reference: nil)
    }

    /// A `@References(.embedsMany)` field: read embedded, sent back as ids. Called by generated code.
    @_documentation(visibility: internal)
    public convenience init<Target: ResourceModel>(
        embeddedReference name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, [Target]> & Sendable,
        _ property: any KeyPath<Model, [Target]> & Sendable,
        key: String? = nil,
        idKey: String? = nil
    ) {
        let reference = EmbeddedReference<Model>(
            key: idKey, defaultKey: Self.referenceIDsKey(name),
            ids: { values in
                .array(try values[keyPath: valuePath].map { try EmbeddedReference<Model>.id(of: $0, field: name) })
            })
        self.init(name, embeddingMany: valuePath, property, key: key, reference: reference)
    }

    private convenience init<Target: ResourceModel>(
        _ name: String,
        embeddingOne valuePath: any WritableKeyPath<Model.FieldValues, Target?> & Sendable,
        _ property: any KeyPath<Model, Target?> & Sendable,
        key: String?,
        reference: EmbeddedReference<Model>?
    ) {
        self.init(
            name, valuePath, property, key: key,
            embedded: EmbeddedCoding(
                decode: { json, path, context in
                    try RelatedRecords<Target>.decode(json, many: false, at: path, context: context)
                },
                assign: { values, instances in values[keyPath: valuePath] = instances.first as? Target },
                encodeNested: { values, store in try values[keyPath: valuePath]?.nestedAttributes(in: store) ?? .null },
                reference: reference,
                unsaved: { values in values[keyPath: valuePath].flatMap { $0.id == nil ? [$0] : [] } ?? [] }),
            isSent: false, related: .of(Target.self), load: { owner in try await owner.fetch() },
            decode: { _, _ in nil }, encode: { _, _ in .null },
            isEqual: { lhs, rhs, _ in lhs === rhs })
    }

    private convenience init<Target: ResourceModel>(
        _ name: String,
        embeddingMany valuePath: any WritableKeyPath<Model.FieldValues, [Target]> & Sendable,
        _ property: any KeyPath<Model, [Target]> & Sendable,
        key: String?,
        reference: EmbeddedReference<Model>?
    ) {
        self.init(
            name, valuePath, property, key: key,
            embedded: EmbeddedCoding(
                decode: { json, path, context in
                    try RelatedRecords<Target>.decode(json, many: true, at: path, context: context)
                },
                assign: { values, instances in values[keyPath: valuePath] = instances.compactMap { $0 as? Target } },
                encodeNested: { values, store in
                    .array(try values[keyPath: valuePath].map { try $0.nestedAttributes(in: store) })
                },
                reference: reference,
                unsaved: { values in values[keyPath: valuePath].filter { $0.id == nil } }),
            isSent: false, related: .of(Target.self), load: { owner in try await owner.fetch() },
            decode: { _, _ in [] }, encode: { _, _ in .array([]) },
            isEqual: { lhs, rhs, _ in lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0 === $1 } })
    }

    /// The default key of a list of ids: `depot_ids`, or `depots` by the conventions.
    static func referenceIDsKey(_ name: String) -> @Sendable (KeyMapping, ServerConventions) -> String {
        { mapping, conventions in
            switch conventions.referenceIDsKey {
            case .singularIDs: Inflector.english.singularize(mapping.wireKey(for: name)) + "_ids"
            case .name: mapping.wireKey(for: name)
            }
        }
    }

    static func referenceLoader<Target: ResourceModel>(
        _ valuePath: any WritableKeyPath<Model.FieldValues, ResourceID?> & Sendable, _ type: Target.Type
    ) -> @Sendable (Model) async throws -> Void {
        { owner in
            let (id, store) = owner._$state.state.withLock { ($0.values[keyPath: valuePath], $0.store ?? .default) }
            guard let id else { return }
            // A live instance answers without a request.
            if let live = store.instance(of: Target.self, id: id) {
                owner._$state.keep([live], for: valuePath)
            } else {
                owner._$state.keep([try await Target.get(id: id, in: store)], for: valuePath)
            }
        }
    }

    static func referencesLoader<Target: ResourceModel>(
        _ valuePath: any WritableKeyPath<Model.FieldValues, [ResourceID]> & Sendable, _ type: Target.Type
    ) -> @Sendable (Model) async throws -> Void {
        { owner in
            let (ids, store) = owner._$state.state.withLock { ($0.values[keyPath: valuePath], $0.store ?? .default) }
            // Live instances answer with no request; the rest come in as few requests as allowed.
            let live = ids.map { store.instance(of: Target.self, id: $0) }
            let fetched = try await Target.fetch(zip(ids, live).filter { $1 == nil }.map(\.0), in: store)
            owner._$state.keep(
                zip(ids, live).compactMap { id, live in live ?? fetched[IdentityMap.Key.Normalized(id)] },
                for: valuePath)
        }
    }
}
