import Foundation
import MonoRailTransport

// JSON:API documents: a resource object is one more backing of the one field loop
// (``JSONAPIRecord``); what differs is where the records sit (`data`, `included`) and how a body
// sent is shaped (`{"data": {"type", "id", "attributes", "relationships"}}`).
extension ModelSetup {
    /// Where each of the model's fields sits in a resource object, with the conventions' key mapping.
    static func jsonAPILayout(mapping: KeyMapping, registry: ModelRegistry) -> JSONAPILayout {
        let fields = Model.resourceSchema.fields
        let places: [JSONAPILayout.Place] = fields.indices.map { index in
            let field = fields[index]
            guard let linkage = field.linkage else { return .attribute }
            let name = mapping.wireKey(for: linkage.name)
            let types = field.related?.types() ?? []
            switch linkage {
            case .one: return .toOne(name, types: types)
            case .many: return .toMany(name, types: types)
            case .polymorphicID: return .polymorphicID(name)
            case .polymorphicType: return .polymorphicType(name)
            }
        }
        return JSONAPILayout(
            places: places, types: Model.jsonAPITypes, typeName: Model.resourceSchema.typeName,
            polymorphicName: { type in registry.model(jsonAPIType: type)?.polymorphicName })
    }

    /// Notes the `type` the server names the model's resource objects with: writes send it from then on.
    func noteResourceType(_ type: String) {
        guard jsonAPI != nil else { return }
        learnedResourceType.withLock { if $0 != type { $0 = type } }
    }

    /// The `type` a write sends: the one the server named, else the conventions' choice.
    var resourceType: String {
        if let learned = learnedResourceType.withLock({ $0 }) { return learned }
        switch conventions.resourceType {
        case .plural: return plural
        case .singular: return singular
        case .typeName: return typeName
        case .custom(let name): return name(typeName)
        }
    }

    // MARK: - Reading

    /// The primary data of a JSON:API response, where it sits, and what the document included.
    func document(in response: APIResponse, expecting: JSONAPIDocument.Expecting) throws -> Located<[JSONValue]> {
        let body = try response.json()
        if case .object(let members) = body, members["data"] == nil, members["errors"] != nil,
            let errors = ValidationErrors.parse(body), !errors.isEmpty
        {
            throw APIError.validationFailed(
                errors, request: response.request, response: response.response, rawBody: response.body,
                parsedBody: body)
        }
        let document = try JSONAPIDocument(body, expecting: expecting, typeName: typeName)
        note(document)
        var located = Located(
            main: document.data, path: JSONAPIDocument.dataPath, container: document.members, rootKey: "data")
        located.document = document
        return located
    }

    /// Notes what a document says of the server: the `type` it names the model's resource objects
    /// with, and the extensions it serves.
    func note(_ document: JSONAPIDocument) {
        if let type = document.primaryType { noteResourceType(type) }
        if case .array(let named)? = document.members["jsonapi"]?["ext"] {
            let extensions = named.compactMap(\.stringValue)
            if !extensions.isEmpty { advertisedExtensions.withLock { $0.formUnion(extensions) } }
        }
    }

    /// The records of `included`, each merged with its model's rules: a type no model of the
    /// store's has is left out, and said once.
    func included(_ groups: [JSONAPIDocument.Group], store: ResourceStore, keepsWire: Bool) throws
        -> [any RelatedPatch]
    {
        var patches: [any RelatedPatch] = []
        for group in groups {
            let type = JSONAPIDocument.normalized(group.type)
            guard let loading = includedLoading(type) else {
                store.noticeOnce(
                    "included \(group.type) in \(typeName)",
                    """
                    a \(typeName) response included resources of type "\(group.type)", which no model of this \
                    store has: they are left out (register their model: MonoRail.register(models:))
                    """)
                continue
            }
            patches.append(
                try loading.decodeIncluded(
                    group, EmbeddingContext(store: store, depth: 1, maxDepth: maxEmbeddingDepth, keepsWire: keepsWire)))
        }
        return patches
    }

    /// The model whose resource objects have the normalized `type`: this one, a related one or a
    /// registered one.
    private func includedLoading(_ type: String) -> SideLoading? {
        if Model.jsonAPITypes.contains(type) { return SideLoading.of(Model.self) }
        return sideLoads.first { $0.loading.types().contains(type) }?.loading
    }

    /// What a document's primary resource objects say of their `@Has` relationships, given to
    /// their instances once merged: the records each linkage lists point at it (when they name no
    /// owner of their own), and `links.related` is where its `load()` reads them.
    func adoptLinkage(of document: JSONAPIDocument, store: ResourceStore) {
        let relationships = Model.resourceSchema.hasRelationships
        guard !relationships.isEmpty else { return }
        let mapping = coding.keyMapping
        // A link may be relative: `/trains/1/cars` is on the API's origin.
        let root = try? client.url(for: "/")
        for resource in document.data {
            guard case .string(let id)? = resource["id"],
                let owner = store.instance(of: Model.self, id: ResourceID.string(id)),
                case .object(let members)? = resource["relationships"]
            else { continue }
            for relationship in relationships {
                guard case .object(let linkage)? = members[mapping.wireKey(for: relationship.name)] else { continue }
                let related = linkage["links"]?["related"]
                if case .string(let text)? = related?["href"] ?? related,
                    let link = URL(string: text, relativeTo: root)?.absoluteURL
                {
                    owner._$state.state.withLock { $0.relatedLinks[relationship.name] = link }
                }
                let identifiers: [JSONValue] =
                    switch linkage["data"] {
                    case .array(let items)?: items
                    case .object?: [linkage["data"] ?? .null]
                    default: []
                    }
                let ids = identifiers.compactMap { item -> ResourceID? in
                    guard case .string(let id)? = item["id"], !id.isEmpty else { return nil }
                    return .string(id)
                }
                if !ids.isEmpty { relationship.adoptLinkage(owner, ids) }
            }
        }
    }

    /// Where the outbox sends writes together as atomic operations now, if anywhere.
    var atomicOperationsPath: String? {
        switch conventions.atomicOperations {
        case .never: nil
        case .always(let path): path
        case .whenAdvertised(let path):
            advertisedExtensions.withLock { $0.contains(JSONAPIDocument.atomicExtension) } ? path : nil
        }
    }

    // MARK: - Writing

    /// A body of fields, as ``ResourceModel/encodeBody(_:only:setup:verb:store:)`` made it, as a
    /// JSON:API document: the fields that are relationships' linkage under `relationships`, the
    /// others under `attributes`.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/encodingFailed`` for a polymorphic reference whose
    ///   model is not registered.
    func resourceDocument(_ body: JSONValue, id: ResourceID?, store: ResourceStore) throws -> JSONValue {
        guard case .object(var fields) = body else { return body }
        var relationships: [String: JSONValue] = [:]
        let schema = decoderPlan.fields
        for index in schema.indices {
            guard let linkage = schema[index].linkage else { continue }
            let key = wireKeys[index]
            let name = coding.keyMapping.wireKey(for: linkage.name)
            switch linkage {
            case .one:
                guard let value = fields.removeValue(forKey: key) else { continue }
                let type = schema[index].related?.resourceType(store) ?? ""
                relationships[name] = ["data": value == .null ? .null : Self.identifier(type, value)]
            case .many:
                guard let value = fields.removeValue(forKey: key) else { continue }
                let type = schema[index].related?.resourceType(store) ?? ""
                relationships[name] = ["data": .array((value.arrayValue ?? []).map { Self.identifier(type, $0) })]
            case .polymorphicID:
                guard let value = fields.removeValue(forKey: key) else { continue }
                let typeKey = schema.indices.first {
                    if case .polymorphicType(linkage.name)? = schema[$0].linkage { true } else { false }
                }
                let named = typeKey.flatMap { fields.removeValue(forKey: wireKeys[$0]) }
                guard value != .null else {
                    relationships[name] = ["data": .null]
                    continue
                }
                guard case .string(let modelName)? = named, let model = models.model(named: modelName) else {
                    throw APIError(
                        .encodingFailed,
                        "\(typeName).\(linkage.name) names a \(named?.stringValue ?? "model") that is not registered, "
                            + "so its JSON:API type is not known: MonoRail.register(models:)")
                }
                relationships[name] = ["data": Self.identifier(Self.resourceType(of: model, in: store), value)]
            case .polymorphicType:
                continue
            }
        }
        // The type of a polymorphic reference went with its id; one left alone is no attribute.
        for index in schema.indices {
            if case .polymorphicType? = schema[index].linkage { fields[wireKeys[index]] = nil }
        }
        var resource: [String: JSONValue] = ["type": .string(resourceType)]
        if let id { resource["id"] = .string(id.description) }
        if !fields.isEmpty { resource["attributes"] = .object(fields) }
        if !relationships.isEmpty { resource["relationships"] = .object(relationships) }
        return ["data": .object(resource)]
    }

    /// The `type` of another model's resource objects, as a write sends it.
    private static func resourceType<Other: ResourceModel>(of model: Other.Type, in store: ResourceStore) -> String {
        store.setup(for: Other.self).resourceType
    }

    /// A resource identifier object of an id as a body of fields holds it: `{"type": "people", "id": "9"}`.
    private static func identifier(_ type: String, _ id: JSONValue) -> JSONValue {
        let text: String =
            switch id {
            case .string(let string): string
            case .int(let int): String(int)
            default: String(decoding: JSONWriter.serialize(id), as: UTF8.self)
            }
        return JSONAPIDocument.identifier(type: type, id: text)
    }
}
