import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient

/// The Objects protocol, as its README lists it:
///
/// ```
/// push    POST   /train/            creates, or updates the record whose id is in the body
/// pull    GET    /train/1           {"object": {…}, "cars": [{…}], "conductors": [{…}]}
/// list    GET    /train/            {"objects": […], "cars": […], …}
/// search  GET    /train/<term>      {"objects": […], …}: a term that is no record's id
/// delete  DELETE /train/1           or DELETE /train/ with {"id": 1} in the body
/// ```
///
/// Every dependency (each relationship's records) is side-loaded under its plural, and a has-many
/// relationship travels inside the record as an id list (`"cars": [1, 2]`), both ways: a push
/// that lists ids points those records here and the ones it no longer lists nowhere. Bodies are
/// MessagePack or JSON, as the request's `Content-Type` and `Accept` say.
struct ObjectsRoutes: Sendable {
    let store: RecordStore
    /// Reads request bodies, as the Rails routes do.
    let records: RecordRoutes

    func install(on router: Router<BasicRequestContext>) {
        router.get("/:resource") { request, context in try list(request, context) }
        router.post("/:resource") { request, context in try await push(request, context) }
        router.delete("/:resource") { request, context in try await delete(request, context, id: nil) }
        router.get("/:resource/:id") { request, context in try pullOrSearch(request, context) }
        router.delete("/:resource/:id") { request, context in try await delete(request, context, id: id(context)) }
    }

    private func resource(_ context: BasicRequestContext) throws -> ResourceSchema {
        guard let name = context.parameters.get("resource"), let resource = store.schema.resource(singular: name)
        else { throw APIProblem(.notFound) }
        return resource
    }

    private func id(_ context: BasicRequestContext) -> String {
        let raw = context.parameters.get("id") ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    // MARK: - Reading

    private func list(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        return try answer(request, resource, key: "objects", records: store.list(resource, filters: [:]).records)
    }

    /// A record by id, else a search: the seed gives both the same path. An id-shaped term that
    /// names no record is a 404, so a pull of a deleted record is not mistaken for an empty search.
    private func pullOrSearch(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let resource = try resource(context)
        let term = id(context)
        if let record = try store.find(resource, id: term) {
            return try answer(request, resource, key: "object", records: [record])
        }
        if store.schema.idType != .string, Int64(term) != nil { throw APIProblem(.notFound) }
        let found = try store.list(resource, filters: ["q": term]).records
        return try answer(request, resource, key: "objects", records: found)
    }

    /// `{"object": …}` or `{"objects": […]}`, with has-many id lists and every dependency beside.
    private func answer(
        _ request: Request, _ resource: ResourceSchema, key: String, records: [JSONValue],
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        var dependencies: [String: [JSONValue]] = [:]
        var seen: [String: Set<JSONValue>] = [:]
        var main: [JSONValue] = []
        for record in records {
            main.append(try listingDependencies(of: record, resource))
            for relationship in resource.relationships ?? [] {
                guard let target = store.schema.target(of: relationship, in: record.objectValue ?? [:]) else {
                    continue
                }
                for item in try store.related(relationship, of: resource, record: record, target: target)
                where seen[target.pluralName, default: []].insert(item).inserted {
                    dependencies[target.pluralName, default: []].append(try listingDependencies(of: item, target))
                }
            }
        }
        var body = dependencies.mapValues(JSONValue.array)
        body[key] = key == "object" ? (main.first ?? .null) : .array(main)
        return JSONResponse.make(status, .object(body), format: ResponseFormat(request))
    }

    /// A record with each has-many relationship as the list of its ids, as Objects sends and reads it.
    private func listingDependencies(of record: JSONValue, _ resource: ResourceSchema) throws -> JSONValue {
        guard case .object(var members) = record else { return record }
        for relationship in resource.relationships ?? [] where relationship.kind == .hasMany {
            guard let target = store.schema.resource(singular: relationship.targetName) else { continue }
            let related = try store.related(relationship, of: resource, record: record, target: target)
            members[relationship.name] = .array(related.map { $0[target.primaryKeyName] ?? .null })
        }
        return .object(members)
    }

    // MARK: - Writing

    /// Creates the record, or updates the one whose id the body carries; then applies the has-many
    /// id lists it sent.
    private func push(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        var attributes = try await records.attributes(of: request, for: resource)
        let idValue = attributes.removeValue(forKey: resource.primaryKeyName)
        var lists: [(RelationshipSchema, [JSONValue])] = []
        for relationship in resource.relationships ?? [] where relationship.kind == .hasMany {
            if case .array(let ids)? = attributes.removeValue(forKey: relationship.name) {
                lists.append((relationship, ids))
            }
        }
        do {
            let record: JSONValue
            let status: HTTPResponse.Status
            if let idValue, !idValue.isNull {
                let id = idValue.intValue.map(String.init) ?? idValue.stringValue ?? ""
                guard let updated = try store.update(resource, id: id, attributes: attributes) else {
                    throw APIProblem(.notFound)
                }
                (record, status) = (updated, .ok)
            } else {
                (record, status) = (try store.create(resource, attributes: attributes), .created)
            }
            for (relationship, ids) in lists { try point(relationship, of: resource, record: record, at: ids) }
            return try answer(request, resource, key: "object", records: [record], status: status)
        } catch let error as RecordValidationError {
            return JSONResponse.validation(
                error, envelope: .objects, root: resource.name, format: ResponseFormat(request))
        }
    }

    /// Points the listed records' foreign key at `record`, and the ones that pointed here and are no
    /// longer listed nowhere: "updates to dependency lists will need to be taken care of by the server".
    private func point(
        _ relationship: RelationshipSchema, of owner: ResourceSchema, record: JSONValue, at ids: [JSONValue]
    )
        throws
    {
        guard let target = store.schema.resource(singular: relationship.targetName),
            let ownerID = record[owner.primaryKeyName]
        else { return }
        let column = relationship.foreignKeyName(owner: owner)
        let listed = Set(ids)
        for child in try store.related(relationship, of: owner, record: record, target: target) {
            guard let childID = child[target.primaryKeyName], !listed.contains(childID) else { continue }
            _ = try store.update(target, id: Self.text(childID), attributes: [column: .null])
        }
        for id in ids {
            guard try store.update(target, id: Self.text(id), attributes: [column: ownerID]) != nil else {
                throw RecordValidationError(messages: [relationship.name: ["names no \(target.name) \(id)"]])
            }
        }
    }

    private static func text(_ id: JSONValue) -> String {
        id.intValue.map(String.init) ?? id.stringValue ?? ""
    }

    private func delete(_ request: Request, _ context: BasicRequestContext, id: String?) async throws -> Response {
        let resource = try resource(context)
        var target = id
        if target == nil {
            let body = try await records.attributes(of: request, for: resource)
            target = body[resource.primaryKeyName].map(Self.text)
        }
        guard let target, try store.delete(resource, id: target) else { throw APIProblem(.notFound) }
        return Response(status: .noContent)
    }
}
