/// Where each of a model's fields sits in a JSON:API resource object: an attribute under its wire
/// key, or a relationship's linkage. Worked out once per model and configuration.
package final class JSONAPILayout: Sendable {
    /// Where one field's value is read from.
    package enum Place: Sendable {
        /// `attributes[key]`, the field's wire key.
        case attribute
        /// The id of a to-one relationship's linkage, `relationships[name].data.id`, whose `type`
        /// must be one of `types` (normalized, ``JSONAPIDocument/normalized(_:)``).
        case toOne(String, types: Set<String>)
        /// The ids of a to-many relationship's linkage.
        case toMany(String, types: Set<String>)
        /// The model a polymorphic relationship's linkage names, by its polymorphic name.
        case polymorphicType(String)
        /// The id a polymorphic relationship's linkage names.
        case polymorphicID(String)
    }

    /// Each field's place, in schema order.
    package let places: [Place]
    /// The model's own types, normalized: a primary resource object of another type is refused.
    package let types: Set<String>
    /// The model's Swift class name, for errors.
    package let typeName: String
    /// The polymorphic name of the model a JSON:API type names, `nil` for a type no model has.
    package let polymorphicName: @Sendable (String) -> String?
    /// Each relationship some field reads, its name in UTF-8, with those fields: what a resource
    /// object read in place matches its relationships' names against.
    package let relationships: [(name: [UInt8], fields: [Int])]

    package init(
        places: [Place], types: Set<String>, typeName: String, polymorphicName: @escaping @Sendable (String) -> String?
    ) {
        self.places = places
        self.types = types
        self.typeName = typeName
        self.polymorphicName = polymorphicName
        var relationships: [(name: [UInt8], fields: [Int])] = []
        for (index, place) in places.enumerated() {
            guard let name = place.relationship else { continue }
            if let known = relationships.firstIndex(where: { $0.name.elementsEqual(name.utf8) }) {
                relationships[known].fields.append(index)
            } else {
                relationships.append((Array(name.utf8), [index]))
            }
        }
        self.relationships = relationships
    }
}

/// What a relationship's `data` says: no related record, one, or a list.
package enum JSONAPILinkage {
    case null
    case one(JSONAPIIdentifier)
    case many([JSONAPIIdentifier])
}

/// A resource identifier object of a response: its `type` and `id`.
package typealias JSONAPIIdentifier = (type: String, id: String)

extension JSONAPILayout {
    /// The value a field whose place is a relationship's takes from that relationship's linkage:
    /// an id, ids, or the polymorphic name of the model the linkage names.
    ///
    /// - Throws: `failure`'s error for linkage of the wrong shape or naming a type the field
    ///   cannot hold.
    func value(of place: Place, from linkage: JSONAPILinkage, failure: (String) -> APIError) throws -> JSONValue {
        switch (place, linkage) {
        case (.attribute, _):
            return .null
        case (.toOne, .null), (.polymorphicType, .null), (.polymorphicID, .null):
            return .null
        case (.toOne(_, let types), .one(let identifier)):
            try require(identifier.type, among: types, failure: failure)
            return .string(identifier.id)
        case (.toMany(_, let types), .many(let identifiers)):
            var ids: [JSONValue] = []
            ids.reserveCapacity(identifiers.count)
            for identifier in identifiers {
                try require(identifier.type, among: types, failure: failure)
                ids.append(.string(identifier.id))
            }
            return .array(ids)
        case (.toMany, .null), (.toMany, .one):
            let found = if case .null = linkage { "null" } else { "an object" }
            throw failure("a to-many relationship's data must be an array, found \(found)")
        case (.polymorphicType, .one(let identifier)):
            guard let model = polymorphicName(identifier.type) else {
                throw failure("the linkage names the type \"\(identifier.type)\", which no registered model has")
            }
            return .string(model)
        case (.polymorphicID, .one(let identifier)):
            return .string(identifier.id)
        case (.toOne, .many), (.polymorphicType, .many), (.polymorphicID, .many):
            throw failure("a to-one relationship's data must be a resource identifier or null, found an array")
        }
    }

    private func require(_ type: String, among types: Set<String>, failure: (String) -> APIError) throws {
        // Most servers spell types as they are normalized: the raw type is looked up first.
        guard !types.isEmpty, !types.contains(type), !types.contains(JSONAPIDocument.normalized(type)) else { return }
        throw failure("the linkage names the type \"\(type)\", not the related model's")
    }
}

extension JSONAPILayout.Place {
    /// The name of the relationship the field reads; `nil` for an attribute.
    package var relationship: String? {
        switch self {
        case .attribute: nil
        case .toOne(let name, _), .toMany(let name, _), .polymorphicType(let name), .polymorphicID(let name): name
        }
    }
}

/// A JSON:API resource object read as a record: its `id`, then each field from its attribute or its
/// relationship's linkage, so the one field loop reads it as it reads every other backing.
///
/// A sparse fieldset's record carries some fields only: those it does not carry are not members,
/// and merge as absent. A relationship with `links` and no `data` says nothing of its linkage and is
/// absent too; a linkage to a record not included is its id, never `null`.
package struct JSONAPIRecord: RecordSource {
    private let id: JSONValue
    private let attributes: [String: JSONValue]
    private let relationships: [String: JSONValue]
    private let keys: RecordKeys
    private let layout: JSONAPILayout
    private let path: String
    /// The next field to look for; -1 before the id.
    private var next = -1
    private var current: JSONValue = .null

    /// A source over a resource object of a response.
    ///
    /// - Throws: ``APIError`` with ``APIError/Code/decodingFailed`` for a resource object without a
    ///   string `type` and `id`, of a type that is not the model's, or whose `attributes` or
    ///   `relationships` are not objects.
    package init(_ resource: JSONValue, keys: RecordKeys, layout: JSONAPILayout, path: String) throws {
        let (type, id) = try JSONAPIDocument.identity(of: resource, at: path, typeName: layout.typeName)
        guard layout.types.contains(type) || layout.types.contains(JSONAPIDocument.normalized(type)) else {
            throw JSONAPIDocument.failure(
                layout.typeName, "a resource object of type \"\(type)\" where a \(layout.typeName) was expected",
                path: path, key: "type")
        }
        self.id = .string(id)
        self.attributes = try Self.object(resource["attributes"], named: "attributes", at: path, layout: layout)
        self.relationships = try Self.object(
            resource["relationships"], named: "relationships", at: path, layout: layout)
        self.keys = keys
        self.layout = layout
        self.path = path
    }

    private static func object(_ value: JSONValue?, named name: String, at path: String, layout: JSONAPILayout) throws
        -> [String: JSONValue]
    {
        switch value {
        case nil, .null?: return [:]
        case .object(let members)?: return members
        case let value?:
            throw JSONAPIDocument.failure(
                layout.typeName, "\"\(name)\" must be an object, found \(value.kind)", path: path,
                key: name)
        }
    }

    package mutating func nextMember() throws -> RecordMember? {
        if next < 0 {
            next = 0
            current = id
            return .id
        }
        while next < keys.count {
            let index = next
            next += 1
            guard let value = try value(at: index) else { continue }
            current = value
            return .field(index)
        }
        if next == keys.count {
            next += 1
            if let version = keys.version, let value = attributes[version] {
                current = value
                return .version
            }
        }
        return nil
    }

    package var value: FieldSource { FieldSource(current) }

    /// The record under the model's wire keys, as a record cache keeps it: made only when asked
    /// for, from members every one of which was read without an error.
    package func wire(keyOrder: [String]) -> WireRecord {
        var flat: [String: JSONValue] = [keys.id: id]
        for index in 0..<keys.count {
            if let value = try? value(at: index) { flat[keys.fields[index]] = value }
        }
        if let version = keys.version, let value = attributes[version] { flat[version] = value }
        return .tree(.object(flat), keyOrder: keyOrder)
    }

    package func leadingID() -> JSONValue? { id }

    /// The value of the field at `index`, `nil` when the resource object does not carry it.
    private func value(at index: Int) throws -> JSONValue? {
        let place = layout.places[index]
        guard let name = place.relationship else { return attributes[keys.fields[index]] }
        guard let data = try data(of: name) else { return nil }
        let linkage: JSONAPILinkage
        switch data {
        case .null: linkage = .null
        case .array(let items): linkage = .many(try items.map { try identity(of: $0, in: name) })
        default: linkage = .one(try identity(of: data, in: name))
        }
        return try layout.value(of: place, from: linkage) { failure($0, name) }
    }

    /// The linkage of a relationship: `nil` when the relationship or its `data` is absent.
    private func data(of name: String) throws -> JSONValue? {
        guard let relationship = relationships[name], relationship != .null else { return nil }
        guard case .object(let members) = relationship else {
            throw failure("a relationship must be an object, found \(relationship.kind)", name)
        }
        return members["data"]
    }

    private func identity(of linkage: JSONValue, in name: String) throws -> JSONAPIIdentifier {
        guard case .object(let members) = linkage, case .string(let type)? = members["type"], !type.isEmpty else {
            throw failure("a resource identifier needs a \"type\" string, found \(linkage)", name)
        }
        guard case .string(let id)? = members["id"], !id.isEmpty else {
            throw failure("a resource identifier in a response needs an \"id\" string, found \(linkage)", name)
        }
        return (type, id)
    }

    private func failure(_ reason: String, _ relationship: String) -> APIError {
        JSONAPIDocument.failure(layout.typeName, reason, path: "\(path).relationships", key: relationship)
    }
}
