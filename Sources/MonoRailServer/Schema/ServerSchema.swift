public import Foundation
public import MonoRailClient

/// The resources a reference server serves, read from a JSON file or built in Swift.
///
/// ```json
/// {
///   "resources": [
///     {"name": "train", "fields": [
///        {"name": "company", "type": "string", "required": true, "max_length": 100},
///        {"name": "max_speed", "type": "float", "min": 0, "max": 600}]},
///     {"name": "car", "fields": [{"name": "occupancy", "type": "integer"}],
///      "relationships": [{"kind": "belongs_to", "name": "train"}]}
///   ],
///   "seed": {"trains": [{"company": "MonoRail Co.", "max_speed": 46.8}]}
/// }
/// ```
public struct ServerSchema: Codable, Sendable, Hashable {
    /// How record ids are made.
    public enum IDType: String, Codable, Sendable, Hashable {
        /// 1, 2, 3, …
        case integer
        /// Random strings such as `"r3kx9q2m"`.
        case string
    }

    /// The resources, in order.
    public var resources: [ResourceSchema]
    /// Records created when the database is empty, by plural name.
    public var seed: [String: [JSONValue]]?
    /// How ids are made. Default ``IDType/integer``.
    public var idType: IDType?

    /// Creates a schema.
    public init(resources: [ResourceSchema], seed: [String: [JSONValue]]? = nil, idType: IDType? = nil) {
        self.resources = resources
        self.seed = seed
        self.idType = idType
    }

    /// Reads a schema file.
    ///
    /// - Throws: ``SchemaError`` for JSON that is malformed or describes an invalid schema.
    public static func load(from url: URL) throws -> ServerSchema {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SchemaError("cannot read the schema file \(url.path): \(error.localizedDescription)")
        }
        let schema: ServerSchema
        do {
            schema = try ValueDecoder().decode(ServerSchema.self, from: data)
        } catch {
            throw SchemaError("the schema file \(url.path) is not valid: \(error)")
        }
        try schema.validate()
        return schema
    }

    /// The resource with this plural name, the one used in paths.
    public func resource(plural: String) -> ResourceSchema? {
        resources.first { $0.pluralName == plural }
    }

    /// The resource with this singular name.
    public func resource(singular: String) -> ResourceSchema? {
        resources.first { $0.name == singular }
    }

    /// The resource a relationship of `record` points at: its declared target, or for a polymorphic
    /// `belongs_to` the resource whose class name the record's `<name>_type` holds.
    func target(of relationship: RelationshipSchema, in record: [String: JSONValue]) -> ResourceSchema? {
        guard relationship.isPolymorphic else { return resource(singular: relationship.targetName) }
        guard case .string(let type)? = record[relationship.typeColumn] else { return nil }
        return resources.first { $0.className == type }
    }

    /// Checks names (they become SQL identifiers), duplicates and relationship targets.
    ///
    /// - Throws: ``SchemaError`` naming the first problem.
    public func validate() throws {
        var plurals = Set<String>()
        for resource in resources {
            guard Self.isIdentifier(resource.name), Self.isIdentifier(resource.pluralName) else {
                throw SchemaError("\"\(resource.name)\" is not a valid resource name (lower-case letters, digits, _)")
            }
            guard plurals.insert(resource.pluralName).inserted else {
                throw SchemaError("the resource \"\(resource.pluralName)\" is declared twice")
            }
            var names = Set(["id", "created_at", "updated_at", resource.primaryKeyName])
            if let key = resource.primaryKey, !Self.isIdentifier(key) {
                throw SchemaError("the primary key \"\(key)\" of \(resource.name) is not a valid name")
            }
            if let path = resource.path,
                path.split(separator: "/", omittingEmptySubsequences: false).contains(where: {
                    !Self.isIdentifier(String($0))
                })
            {
                throw SchemaError("the path \"\(path)\" of \(resource.name) is not segments of lower-case letters")
            }
            for field in resource.fields {
                guard Self.isIdentifier(field.name) else {
                    throw SchemaError("\"\(field.name)\" in \(resource.name) is not a valid field name")
                }
                guard names.insert(field.name).inserted else {
                    throw SchemaError("the field \"\(field.name)\" is declared twice in \(resource.name)")
                }
            }
            for relationship in resource.relationships ?? [] {
                if relationship.isPolymorphic {
                    guard names.insert(relationship.typeColumn).inserted else {
                        throw SchemaError(
                            "the type column of \(resource.name).\(relationship.name) clashes with a field")
                    }
                } else if !resources.contains(where: { $0.name == relationship.targetName }) {
                    throw SchemaError(
                        "\(resource.name).\(relationship.name) refers to an unknown resource \"\(relationship.targetName)\""
                    )
                }
                if relationship.kind == .belongsTo, !names.insert(relationship.foreignKeyName(owner: resource)).inserted
                {
                    throw SchemaError("the foreign key of \(resource.name).\(relationship.name) clashes with a field")
                }
            }
        }
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first,
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) || first == UInt8(ascii: "_")
        else { return false }
        return name.utf8.count <= 64
            && name.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "_")
            }
    }
}

/// A schema file that cannot be used.
public struct SchemaError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// One resource: its names, fields and relationships.
public struct ResourceSchema: Codable, Sendable, Hashable {
    /// The singular name, such as `train` (the JSON root of one record).
    public var name: String
    /// The plural name, such as `trains` (the path and the root of a list); default: the name + `s`.
    public var plural: String?
    /// The fields besides `id`, `created_at` and `updated_at`.
    public var fields: [FieldSchema]
    /// Relationships to other resources.
    public var relationships: [RelationshipSchema]?
    /// Relationships a show response embeds.
    public var embeds: [String]?
    /// The key a record's id is written under; default `id` (ApiModel's `primaryKey()`, `user_id`).
    public var primaryKey: String?
    /// Whether the resource is one record at one path with no id (Rails' `resource :profile`,
    /// ApiModel's `ApiRoutes.resource("/user.json")`), served at ``path`` with or without `.json`.
    public var singleton: Bool?
    /// A singleton's path, such as `user/avatar`; default the singular name.
    public var path: String?
    /// The class name a polymorphic `_type` column holds when the app names its class otherwise
    /// (Rails' `Fleet::Wagon` for `cars`); default the name in CamelCase.
    public var typeName: String?

    /// Creates a resource.
    public init(
        name: String, plural: String? = nil, fields: [FieldSchema], relationships: [RelationshipSchema]? = nil,
        embeds: [String]? = nil, primaryKey: String? = nil, singleton: Bool? = nil, path: String? = nil
    ) {
        self.name = name
        self.plural = plural
        self.fields = fields
        self.relationships = relationships
        self.embeds = embeds
        self.primaryKey = primaryKey
        self.singleton = singleton
        self.path = path
    }

    /// The key ids are written under.
    public var primaryKeyName: String { primaryKey ?? "id" }

    /// The class name Rails gives the resource, which a polymorphic `_type` column holds: `train_car`
    /// is `TrainCar`, unless ``typeName`` says otherwise.
    public var className: String {
        typeName ?? name.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The plural name in use.
    public var pluralName: String { plural ?? name + "s" }

    /// Fields and `belongs_to` foreign keys: every column besides `id` and the timestamps. Foreign
    /// keys have the type of the ids they hold.
    func columns(idType: ServerSchema.IDType?) -> [FieldSchema] {
        let keyType: FieldSchema.FieldType = idType == .string ? .string : .integer
        return fields
            + (relationships ?? []).filter { $0.kind == .belongsTo }.flatMap { relationship in
                [FieldSchema(name: relationship.foreignKeyName(owner: self), type: keyType)]
                    + (relationship.isPolymorphic ? [FieldSchema(name: relationship.typeColumn, type: .string)] : [])
            }
    }
}

/// One field of a resource, with its type and validations.
public struct FieldSchema: Codable, Sendable, Hashable {
    /// Field types, stored as SQLite column types.
    public enum FieldType: String, Codable, Sendable, Hashable {
        /// Text.
        case string
        /// 64-bit integer.
        case integer
        /// Double.
        case float
        /// `true` or `false`.
        case boolean
        /// An ISO 8601 timestamp.
        case datetime
        /// Any JSON value.
        case json
        /// A file sent as a `multipart/form-data` part: stored under the uploads directory, read
        /// back as `{"file_name", "content_type", "size", "sha256", "url"}`.
        case file
    }

    /// The name, in snake_case.
    public var name: String
    /// The type.
    public var type: FieldType
    /// Whether a value must be present and not blank.
    public var required: Bool?
    /// The smallest number allowed.
    public var min: Double?
    /// The largest number allowed.
    public var max: Double?
    /// The shortest string allowed.
    public var minLength: Int?
    /// The longest string allowed.
    public var maxLength: Int?

    /// Creates a field.
    public init(
        name: String, type: FieldType, required: Bool? = nil, min: Double? = nil, max: Double? = nil,
        minLength: Int? = nil, maxLength: Int? = nil
    ) {
        self.name = name
        self.type = type
        self.required = required
        self.min = min
        self.max = max
        self.minLength = minLength
        self.maxLength = maxLength
    }
}

/// A relationship between resources, in Rails' terms.
public struct RelationshipSchema: Codable, Sendable, Hashable {
    /// Rails' association kinds.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// This record holds the other's id (`train_id`).
        case belongsTo = "belongs_to"
        /// Other records hold this one's id.
        case hasMany = "has_many"
        /// One other record holds this one's id.
        case hasOne = "has_one"
    }

    /// The kind.
    public var kind: Kind
    /// The relationship's name: `train`, `cars`, `conductor`.
    public var name: String
    /// The singular name of the related resource; default: the name, singularised by dropping an `s`.
    public var resource: String?
    /// The foreign key column; default `<owner or target>_id`.
    public var foreignKey: String?
    /// For `belongs_to`: whether it points at a record of any resource, named by a `<name>_type`
    /// column holding the resource's class name (`"Train"`, `"TrainCar"`), as Rails'
    /// `belongs_to :subject, polymorphic: true`.
    public var polymorphic: Bool?

    /// Creates a relationship.
    public init(
        kind: Kind, name: String, resource: String? = nil, foreignKey: String? = nil, polymorphic: Bool? = nil
    ) {
        self.kind = kind
        self.name = name
        self.resource = resource
        self.foreignKey = foreignKey
        self.polymorphic = polymorphic
    }

    /// Whether this is a polymorphic `belongs_to`.
    var isPolymorphic: Bool { kind == .belongsTo && polymorphic == true }

    /// The column naming a polymorphic target's resource: `<name>_type`.
    var typeColumn: String { "\(name)_type" }

    /// The related resource's singular name.
    var targetName: String {
        if let resource { return resource }
        return kind == .hasMany && name.hasSuffix("s") ? String(name.dropLast()) : name
    }

    /// The foreign key: on the owner for `belongs_to`, on the target otherwise.
    func foreignKeyName(owner: ResourceSchema) -> String {
        if let foreignKey { return foreignKey }
        return kind == .belongsTo ? "\(name)_id" : "\(owner.name)_id"
    }
}
