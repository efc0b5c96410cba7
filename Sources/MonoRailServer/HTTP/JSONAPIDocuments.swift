import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient

/// JSON:API 1.1 documents as the reference server writes and reads them: a record as a resource
/// object (`type` the plural, `id` a string, its columns as `attributes`, each `belongs_to` as a
/// relationship with linkage, each `has_many` with its `related` link), and a request's resource
/// object as a record's attributes.
struct JSONAPIDocuments: Sendable {
    let schema: ServerSchema

    static let mediaType = "application/vnd.api+json"

    /// A record as a resource object; `linkage` adds the data of relationships that have none of
    /// their own in the record (a `has_many` whose records were included); `fields` keeps only the
    /// attributes and relationships a sparse fieldset names.
    func resourceObject(
        _ record: JSONValue, _ resource: ResourceSchema, linkage: [String: JSONValue] = [:], fields: Set<String>? = nil
    ) -> JSONValue {
        guard case .object(let members) = record else { return .null }
        let id = Self.text(members[resource.primaryKeyName]) ?? ""
        let relationships = resource.relationships ?? []
        var hidden = Set(relationships.map(\.name))
        hidden.insert(resource.primaryKeyName)
        for relationship in relationships where relationship.kind == .belongsTo {
            hidden.insert(relationship.foreignKeyName(owner: resource))
            if relationship.isPolymorphic { hidden.insert(relationship.typeColumn) }
        }
        var attributes: [String: JSONValue] = [:]
        for (key, value) in members where !hidden.contains(key) && fields?.contains(key) ?? true {
            attributes[key] = value
        }
        let path = "/\(resource.pluralName)/\(APIPath.encodeSegment(id))"
        var related: [String: JSONValue] = [:]
        for relationship in relationships where fields?.contains(relationship.name) ?? true {
            var object: [String: JSONValue] = [
                "links": [
                    "self": .string("\(path)/relationships/\(relationship.name)"),
                    "related": .string("\(path)/\(relationship.name)"),
                ]
            ]
            if relationship.kind == .belongsTo {
                let target = schema.target(of: relationship, in: members)
                if let id = Self.text(members[relationship.foreignKeyName(owner: resource)]), let target {
                    object["data"] = identifier(target, id)
                } else {
                    object["data"] = .null
                }
            } else if let data = linkage[relationship.name] {
                object["data"] = data
            }
            related[relationship.name] = .object(object)
        }
        var resourceObject: [String: JSONValue] = [
            "type": .string(resource.pluralName), "id": .string(id), "links": ["self": .string(path)],
        ]
        if !attributes.isEmpty { resourceObject["attributes"] = .object(attributes) }
        if !related.isEmpty { resourceObject["relationships"] = .object(related) }
        return .object(resourceObject)
    }

    func identifier(_ resource: ResourceSchema, _ id: String) -> JSONValue {
        ["type": .string(resource.pluralName), "id": .string(id)]
    }

    /// The resource a `type` names: its plural, its singular or its class name.
    func resource(type: String) -> ResourceSchema? {
        let spelled = JSONAPIDocument.normalized(type)
        return schema.resources.first { resource in
            resource.singleton != true
                && [resource.pluralName, resource.name, resource.className].contains {
                    JSONAPIDocument.normalized($0) == spelled
                }
        }
    }

    /// What a request's resource object asks to write: its attributes, each `belongs_to` linkage as
    /// the foreign key (and type column), and each `has_many` linkage as the records to point here.
    struct Write {
        var attributes: [String: JSONValue] = [:]
        var memberships: [(relationship: RelationshipSchema, ids: [String])] = []
        /// The `lid` a request gave the record it creates.
        var lid: String?
        var id: String?
    }

    /// Reads a resource object sent for `resource`; `at` is where it sits, for error pointers.
    ///
    /// - Parameter resolve: The id a `lid` of an earlier operation became (atomic operations).
    /// - Throws: ``JSONAPIProblem``: 409 for another type, 400 for anything malformed.
    func write(
        _ value: JSONValue?, for resource: ResourceSchema, at pointer: String,
        resolve: (String) -> String? = { _ in nil }
    ) throws -> Write {
        guard case .object(let members)? = value else {
            throw JSONAPIProblem(.badRequest, "the primary data must be a resource object", pointer: pointer)
        }
        guard case .string(let type)? = members["type"] else {
            throw JSONAPIProblem(.badRequest, "a resource object needs a \"type\"", pointer: pointer + "/type")
        }
        guard self.resource(type: type)?.name == resource.name else {
            throw JSONAPIProblem(
                .conflict, "the type \"\(type)\" is not this endpoint's \"\(resource.pluralName)\"",
                pointer: pointer + "/type")
        }
        var write = Write()
        switch members["id"] {
        case nil: break
        case .string(let id)?: write.id = id
        default: throw JSONAPIProblem(.badRequest, "\"id\" must be a string", pointer: pointer + "/id")
        }
        switch members["lid"] {
        case nil: break
        case .string(let lid)?: write.lid = lid
        default: throw JSONAPIProblem(.badRequest, "\"lid\" must be a string", pointer: pointer + "/lid")
        }
        switch members["attributes"] {
        case nil: break
        case .object(let attributes)?:
            let relationships = Set((resource.relationships ?? []).map(\.name))
            for (key, value) in attributes {
                guard key != resource.primaryKeyName, !relationships.contains(key) else {
                    throw JSONAPIProblem(
                        .badRequest, "\"\(key)\" is not an attribute", pointer: "\(pointer)/attributes/\(key)")
                }
                write.attributes[key] = value
            }
        default:
            throw JSONAPIProblem(.badRequest, "\"attributes\" must be an object", pointer: pointer + "/attributes")
        }
        switch members["relationships"] {
        case nil: break
        case .object(let relationships)?:
            for (name, value) in relationships {
                let at = "\(pointer)/relationships/\(name)"
                guard let relationship = resource.relationships?.first(where: { $0.name == name }) else {
                    throw JSONAPIProblem(
                        .badRequest, "\"\(name)\" is no relationship of \(resource.pluralName)", pointer: at)
                }
                guard let data = value["data"] else {
                    throw JSONAPIProblem(.badRequest, "a relationship sent needs \"data\"", pointer: at)
                }
                try apply(data, of: relationship, for: resource, at: at + "/data", to: &write, resolve: resolve)
            }
        default:
            throw JSONAPIProblem(
                .badRequest, "\"relationships\" must be an object", pointer: pointer + "/relationships")
        }
        return write
    }

    private func apply(
        _ data: JSONValue, of relationship: RelationshipSchema, for resource: ResourceSchema, at pointer: String,
        to write: inout Write, resolve: (String) -> String?
    ) throws {
        switch (relationship.kind, data) {
        case (.belongsTo, .null):
            write.attributes[relationship.foreignKeyName(owner: resource)] = .null
            if relationship.isPolymorphic { write.attributes[relationship.typeColumn] = .null }
        case (.belongsTo, .object):
            let (target, id) = try self.identity(data, at: pointer, resolve: resolve)
            if relationship.isPolymorphic {
                write.attributes[relationship.typeColumn] = .string(target.className)
            } else if target.name != schema.resource(singular: relationship.targetName)?.name {
                throw JSONAPIProblem(
                    .conflict,
                    "\(relationship.name) takes \(relationship.targetName) records, not \(target.pluralName)",
                    pointer: pointer + "/type")
            }
            write.attributes[relationship.foreignKeyName(owner: resource)] = Self.key(id, idType: schema.idType)
        case (.hasMany, .array(let items)):
            var ids: [String] = []
            for (index, item) in items.enumerated() {
                ids.append(try self.identity(item, at: "\(pointer)/\(index)", resolve: resolve).1)
            }
            write.memberships.append((relationship, ids))
        default:
            throw JSONAPIProblem(
                .badRequest,
                "\(relationship.name) takes \(relationship.kind == .hasMany ? "an array of resource identifiers" : "a resource identifier or null")",
                pointer: pointer)
        }
    }

    /// The resource and id a resource identifier names, a `lid` resolved to the id it became.
    func identity(_ value: JSONValue, at pointer: String, resolve: (String) -> String? = { _ in nil }) throws -> (
        ResourceSchema, String
    ) {
        guard case .string(let type)? = value["type"], let target = resource(type: type) else {
            throw JSONAPIProblem(.badRequest, "a resource identifier needs a known \"type\"", pointer: pointer)
        }
        if case .string(let id)? = value["id"], !id.isEmpty { return (target, id) }
        if case .string(let lid)? = value["lid"] {
            guard let id = resolve(lid) else {
                throw JSONAPIProblem(
                    .badRequest, "the lid \"\(lid)\" names no resource an earlier operation created", pointer: pointer)
            }
            return (target, id)
        }
        throw JSONAPIProblem(.badRequest, "a resource identifier needs an \"id\" string", pointer: pointer)
    }

    /// An id as its column holds it.
    static func key(_ id: String, idType: ServerSchema.IDType?) -> JSONValue {
        if idType != .string, let number = Int64(id) { return .int(number) }
        return .string(id)
    }

    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .int(let number)?: String(number)
        case .string(let text)?: text
        default: nil
        }
    }

    /// Validation errors as error objects pointing at the fields of the document sent: a
    /// `belongs_to` key at its relationship, anything else at its attribute.
    func errors(_ error: RecordValidationError, for resource: ResourceSchema, at pointer: String = "/data")
        -> [JSONValue]
    {
        var keys: [String: String] = [:]
        for relationship in resource.relationships ?? [] where relationship.kind == .belongsTo {
            keys[relationship.foreignKeyName(owner: resource)] = relationship.name
        }
        return error.messages.keys.sorted().flatMap { field in
            (error.messages[field] ?? []).map { message -> JSONValue in
                let source =
                    keys[field].map { "\(pointer)/relationships/\($0)" }
                    ?? (field == "base" ? pointer : "\(pointer)/attributes/\(field)")
                return [
                    "status": .string("422"), "code": .string("invalid"), "title": .string("Invalid \(field)"),
                    "detail": .string(message),
                    "source": ["pointer": .string(source)],
                ]
            }
        }
    }
}

/// An error answered as a JSON:API error document, `{"errors": [{…}]}`.
struct JSONAPIProblem: Error, HTTPResponseError {
    let status: HTTPResponse.Status
    let errors: [JSONValue]

    init(_ status: HTTPResponse.Status, _ detail: String, pointer: String? = nil) {
        var object: [String: JSONValue] = [
            "status": .string(String(status.code)), "title": .string(status.reasonPhrase), "detail": .string(detail),
        ]
        if let pointer { object["source"] = ["pointer": .string(pointer)] }
        self.status = status
        self.errors = [.object(object)]
    }

    init(_ status: HTTPResponse.Status, errors: [JSONValue]) {
        self.status = status
        self.errors = errors
    }

    var answer: WriteAnswer {
        var answer = WriteAnswer(status, ["errors": .array(errors)])
        answer.headers[.contentType] = JSONAPIDocuments.mediaType
        return answer
    }

    func response(from request: Request, context: some RequestContext) throws -> Response { answer.response }
}
