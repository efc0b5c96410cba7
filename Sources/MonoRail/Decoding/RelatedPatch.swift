import Foundation

/// Related records decoded from inside another record (embedded) or beside it (side-loaded),
/// merged in the same locked step as the record itself.
protocol RelatedPatch {
    /// Checks, without changing anything, that the records can merge.
    func check(in map: inout IdentityMap) throws
    /// Merges the records and returns their instances, in order.
    func apply(
        in map: inout IdentityMap, store: ResourceStore, coder: FieldCoder, fetched: FetchStamp,
        announcements: inout [() -> Void]
    ) -> [any ResourceModel]
    /// Adds the records, as they came, to what a record cache is given: JSON text kept as it is when
    /// the cache is `acceptingJSON`.
    func collect(into records: inout [StoredRecord], fetched: FetchStamp, acceptingJSON: Bool)
    /// The cache keys of the records.
    var keys: [RecordKey] { get }
    /// Gives the records the server just created the app's instances that were sent without an
    /// id, in order: the answer to a save of nested attributes names the app's new children by
    /// their new ids. Each takes its record's id and place in the identity map.
    func adopt(
        unsaved: [any ResourceModel], in map: inout IdentityMap, store: ResourceStore,
        announcements: inout [() -> Void])
}

/// Where embedded records are being decoded, and how deep.
struct EmbeddingContext {
    let store: ResourceStore
    let depth: Int
    let maxDepth: Int
    /// Whether records keep their form as received, for the record cache.
    var keepsWire = false
}

/// Records of one related model, ready to merge.
struct RelatedRecords<Child: ResourceModel>: RelatedPatch {
    var patches: [RecordPatch<Child>]

    func check(in map: inout IdentityMap) throws {
        try Merger.check(patches, target: nil, in: &map)
    }

    func apply(
        in map: inout IdentityMap, store: ResourceStore, coder: FieldCoder, fetched: FetchStamp,
        announcements: inout [() -> Void]
    ) -> [any ResourceModel] {
        Merger.apply(
            patches, target: nil, mode: .read, store: store, map: &map, coder: coder, fetched: fetched,
            announcements: &announcements)
    }

    func collect(into records: inout [StoredRecord], fetched: FetchStamp, acceptingJSON: Bool) {
        let model = Child.resourceName
        for patch in patches {
            patch.collect(into: &records, model: model, fetched: fetched, acceptingJSON: acceptingJSON)
        }
    }

    var keys: [RecordKey] {
        let model = Child.resourceName
        return patches.compactMap { $0.id.map { RecordKey(model: model, id: $0) } }
    }

    func adopt(
        unsaved: [any ResourceModel], in map: inout IdentityMap, store: ResourceStore,
        announcements: inout [() -> Void]
    ) {
        var waiting = unsaved.compactMap { $0 as? Child }[...]
        guard !waiting.isEmpty else { return }
        for patch in patches {
            guard let id = patch.id else { continue }
            let key = IdentityMap.Key(type: ObjectIdentifier(Child.self), id: id)
            guard map.lookup(key)?.object == nil, let child = waiting.popFirst() else { continue }
            child._$state.state.withLock { state in
                state.id = id
                state.isPersisted = true
            }
            map.insert(child, for: key, id: id)
            // Its id is new to its observers and to the relationship index, whatever the merge changes.
            announcements.append {
                child._$state.announceIdentity(of: child)
                store.noteRelationships(of: child, kind: .created, fields: [])
            }
        }
    }

    /// Decodes the resource objects of one type from a JSON:API document's `included`, each at its
    /// place there for errors.
    static func decode(included group: JSONAPIDocument.Group, context: EmbeddingContext) throws -> Self {
        let childSetup = context.store.setup(for: Child.self)
        childSetup.noteResourceType(group.type)
        let decoder = childSetup.decoder(
            coder: FieldCoder(options: childSetup.coding), store: context.store,
            embedding: EmbeddingContext(
                store: context.store, depth: context.depth + 1, maxDepth: context.maxDepth,
                keepsWire: context.keepsWire),
            readsDocuments: true)
        var patches: [RecordPatch<Child>] = []
        patches.reserveCapacity(group.resources.count)
        for (index, resource) in group.resources {
            let location = RecordLocation(base: JSONAPIDocument.includedPath, index: index)
            if let patch = try decoder.decodeUnlessDropped(resource, at: location) { patches.append(patch) }
        }
        return RelatedRecords(patches: patches)
    }

    /// Decodes one record (`many == false`), or an array of them; `null` is none.
    static func decode(_ json: JSONValue, many: Bool, at path: String, context: EmbeddingContext) throws -> Self {
        guard context.depth < context.maxDepth else {
            let detail = DecodingFailure(
                typeName: Child.resourceSchema.typeName, key: nil, path: path,
                reason: "records are embedded more than \(context.maxDepth) levels deep")
            throw APIError(decodingFailure: detail)
        }
        let childSetup = context.store.setup(for: Child.self)
        let decoder = childSetup.decoder(
            coder: FieldCoder(options: childSetup.coding), store: context.store,
            embedding: EmbeddingContext(
                store: context.store, depth: context.depth + 1, maxDepth: context.maxDepth,
                keepsWire: context.keepsWire))
        switch (json, many) {
        case (.null, _):
            return RelatedRecords(patches: [])
        case (.array(let array), true):
            var patches: [RecordPatch<Child>] = []
            patches.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                let location = RecordLocation(base: path, index: index)
                if let patch = try decoder.decodeUnlessDropped(element, at: location) { patches.append(patch) }
            }
            try RecordPatch.requireDistinctIDs(patches, at: path)
            return RelatedRecords(patches: patches)
        case (_, false):
            let patch = try decoder.decodeUnlessDropped(json, at: RecordLocation(base: path))
            return RelatedRecords(patches: patch.map { [$0] } ?? [])
        default:
            let detail = DecodingFailure(
                typeName: Child.resourceSchema.typeName, key: nil, path: path,
                reason:
                    "expected an array of \(Child.resourceSchema.typeName) records, found \(json.kind)"
            )
            throw APIError(decodingFailure: detail)
        }
    }
}

/// How an embedded field reads its records and stores the instances.
struct EmbeddedCoding<Model: ResourceModel>: Sendable {
    let decode: @Sendable (JSONValue, String, EmbeddingContext) throws -> any RelatedPatch
    let assign: @Sendable (inout Model.FieldValues, [any ResourceModel]) -> Void
    /// The embedded records as Rails' nested attributes: each child's fields, with its id when it has one.
    let encodeNested: @Sendable (Model.FieldValues, ResourceStore) throws -> JSONValue
    /// For a `@References` embedded field, how it is sent back: as ids. `nil` for `@Has`.
    let reference: EmbeddedReference<Model>?
    /// The embedded instances the server has not created yet, in order.
    let unsaved: @Sendable (Model.FieldValues) -> [any ResourceModel]
}

/// An embedded `@References` field sent back as the id (or ids) of the records it holds: the seed's
/// `referenceIdField`.
struct EmbeddedReference<Model: ResourceModel>: Sendable {
    /// `@References(idKey:)`, when given.
    let key: String?
    let defaultKey: @Sendable (KeyMapping, ServerConventions) -> String
    /// The ids; throws when a record held has none yet, since sending nothing would lose the edit.
    let ids: @Sendable (Model.FieldValues) throws -> JSONValue

    static func id(of target: some ResourceModel, field: String) throws -> JSONValue {
        guard let id = target.id else {
            throw APIError(
                .encodingFailed,
                "\(Model.resourceSchema.typeName).\(field) holds a \(type(of: target).resourceSchema.typeName) "
                    + "the server has not created yet: create it first, or list \"\(field)\" in nestedAttributes "
                    + "to send the record itself")
        }
        return id.jsonValue
    }
}

extension ResourceModel {
    /// This record's fields for a nested-attributes body, with its id when it has one.
    func nestedAttributes(in store: ResourceStore) throws -> JSONValue {
        let snapshot = _$state.snapshot()
        let setup = store.setup(for: Self.self)
        var (body, files) = try Self.encodeBody(
            snapshot.values, only: nil, setup: setup, verb: .update, store: store)
        guard files.isEmpty else {
            throw APIError(
                .encodingFailed, "\(Self.resourceSchema.typeName) holds a file; nested attributes cannot carry uploads")
        }
        if let id = snapshot.id, case .object(var object) = body {
            object[setup.idKey] = id.jsonValue
            body = .object(object)
        }
        return body
    }
}

/// A related model whose records a response may carry beside the main ones: `{"train": …, "cars": […]}`.
struct SideLoading: Sendable {
    let plural: @Sendable () -> String
    /// The related model's resource name, which its cached records are kept under.
    let model: @Sendable () -> String
    let decode: @Sendable (JSONValue, String, EmbeddingContext) throws -> any RelatedPatch
    /// The JSON:API types that name the related model, normalized (``ResourceModel/jsonAPITypes``).
    let types: @Sendable () -> Set<String>
    /// Decodes the related model's resource objects of a JSON:API document's `included`.
    let decodeIncluded: @Sendable (JSONAPIDocument.Group, EmbeddingContext) throws -> any RelatedPatch
    /// The `type` a JSON:API write names the related model's resource objects with, in a store.
    let resourceType: @Sendable (ResourceStore) -> String
    /// Decodes cached records of the related model, each with its fetched-at unless the server
    /// confirmed them all at the date given.
    let decodeStored: @Sendable ([StoredRecord], ResourceStore, FetchStamp?) throws -> any RelatedPatch

    static func of<Target: ResourceModel>(_ type: Target.Type) -> SideLoading {
        SideLoading(
            plural: { Target.resourcePlural },
            model: { Target.resourceName },
            decode: { json, path, context in
                try RelatedRecords<Target>.decode(json, many: true, at: path, context: context)
            },
            types: { Target.jsonAPITypes },
            decodeIncluded: { group, context in try RelatedRecords<Target>.decode(included: group, context: context) },
            resourceType: { store in store.setup(for: Target.self).resourceType },
            decodeStored: { records, store, confirmed in
                try decodeStored(Target.self, records, store: store, confirmed: confirmed)
            })
    }
}
