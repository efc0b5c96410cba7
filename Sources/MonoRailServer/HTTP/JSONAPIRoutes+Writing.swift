import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
import NIOCore

// Writes: one record at a time, a relationship's members, or a graph of operations in one
// transaction (the Atomic Operations extension). Each runs once per `Idempotency-Key`.
extension JSONAPIRoutes {
    /// The request body as a document, read up to the size limit.
    func body(_ request: Request) async throws -> JSONValue {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: records.maxBodySize)
        } catch {
            throw JSONAPIProblem(.contentTooLarge, "the body is larger than \(records.maxBodySize) bytes")
        }
        do {
            return try JSONParser().parse(Data(buffer.readableBytesView))
        } catch {
            throw JSONAPIProblem(.badRequest, "the body is not valid JSON: \(error)")
        }
    }

    /// Reads the body of a write for the idempotency ledger's fingerprint, after negotiating it.
    private func document(of request: Request) async throws -> [String: JSONValue] {
        guard try extensions(of: request).isEmpty else {
            throw JSONAPIProblem(.unsupportedMediaType, "the atomic extension is served at POST /operations")
        }
        guard case .object(let members) = try await body(request) else {
            throw JSONAPIProblem(.badRequest, "a document is an object")
        }
        return members
    }

    func create(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        return try await records.writes.run(request, read: try await document(of: request)) { document, db in
            let write = try documents.write(document?["data"], for: resource, at: "/data")
            let record = try create(resource, write, at: "/data", db: db)
            var answer = Self.answer(.created, ["data": documents.resourceObject(record, resource)])
            if let id = JSONAPIDocuments.text(record[resource.primaryKeyName]) {
                answer.headers[.location] = "/\(resource.pluralName)/\(APIPath.encodeSegment(id))"
            }
            return answer
        }
    }

    func update(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let id = id(context)
        return try await records.writes.run(request, read: try await document(of: request)) { document, db in
            let write = try documents.write(document?["data"], for: resource, at: "/data")
            guard write.id == id else {
                throw JSONAPIProblem(.conflict, "the resource object's id is not the URL's", pointer: "/data/id")
            }
            let record = try update(resource, id: id, write, at: "/data", db: db)
            return Self.answer(.ok, ["data": documents.resourceObject(record, resource)])
        }
    }

    func destroy(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let id = id(context)
        return try await records.writes.run(request, read: nil) { _, db in
            guard try store.delete(resource, id: id, db: db) else {
                throw JSONAPIProblem(.notFound, "no \(resource.name) \(id)")
            }
            return WriteAnswer(status: .noContent)
        }
    }

    /// `POST`, `DELETE` or `PATCH /trains/1/relationships/cars`: adds, removes or replaces a to-many
    /// relationship's members (`PATCH` also sets a to-one); answers with the linkage now.
    func membership(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let (resource, _, relationship) = try relationshipOf(context)
        let id = id(context)
        return try await records.writes.run(request, read: try await document(of: request)) { document, db in
            try change(
                relationship, of: resource, id: id, data: document?["data"], method: request.method, at: "/data", db: db
            )
            guard let record = try store.show(resource, id: id, db: db) else {
                throw JSONAPIProblem(.notFound, "no \(resource.name) \(id)")
            }
            return Self.answer(.ok, ["data": try linkage(of: relationship, resource, record, db: db)])
        }
    }

    // MARK: - Effects

    func create(_ resource: ResourceSchema, _ write: JSONAPIDocuments.Write, at pointer: String, db: any SQLConnection)
        throws -> JSONValue
    {
        if let id = write.id {
            // JSON:API's client-generated ids: 403 where the server makes ids, 409 for one taken.
            guard store.acceptsClientIDs else {
                throw JSONAPIProblem(
                    .forbidden, "ids are made by the server (its ids are integers)", pointer: pointer + "/id")
            }
            guard try !store.exists(resource, id: id, db: db) else {
                throw JSONAPIProblem(.conflict, "a \(resource.name) \(id) exists already", pointer: pointer + "/id")
            }
        }
        let record: JSONValue
        do {
            record = try store.create(resource, id: write.id, attributes: write.attributes, db: db)
        } catch let error as RecordValidationError {
            throw JSONAPIProblem(.unprocessableContent, errors: documents.errors(error, for: resource, at: pointer))
        }
        guard let id = JSONAPIDocuments.text(record[resource.primaryKeyName]) else { return record }
        for (relationship, ids) in write.memberships {
            try replace(relationship, of: resource, id: id, with: ids, at: pointer, db: db)
        }
        return record
    }

    func update(
        _ resource: ResourceSchema, id: String, _ write: JSONAPIDocuments.Write, at pointer: String,
        db: any SQLConnection
    ) throws -> JSONValue {
        let record: JSONValue?
        do {
            record = try store.update(resource, id: id, attributes: write.attributes, db: db)
        } catch let error as RecordValidationError {
            throw JSONAPIProblem(.unprocessableContent, errors: documents.errors(error, for: resource, at: pointer))
        }
        guard let record else { throw JSONAPIProblem(.notFound, "no \(resource.name) \(id)", pointer: pointer) }
        for (relationship, ids) in write.memberships {
            try replace(relationship, of: resource, id: id, with: ids, at: pointer, db: db)
        }
        return record
    }

    /// Carries out a relationship request's linkage: a to-many's members added (`POST`), removed
    /// (`DELETE`) or replaced (`PATCH`); a to-one set (`PATCH`).
    func change(
        _ relationship: RelationshipSchema, of resource: ResourceSchema, id: String, data: JSONValue?,
        method: HTTPRequest.Method, at pointer: String, db: any SQLConnection,
        resolve: (String) -> String? = { _ in nil }
    ) throws {
        guard let data else {
            throw JSONAPIProblem(.badRequest, "a relationship request needs \"data\"", pointer: pointer)
        }
        if relationship.kind == .belongsTo {
            guard method == .patch else {
                throw JSONAPIProblem(.forbidden, "a to-one relationship is set with PATCH", pointer: pointer)
            }
            var write = JSONAPIDocuments.Write()
            let identifier: JSONValue = data
            var members: [String: JSONValue] = ["type": .string(resource.pluralName), "id": .string(id)]
            members["relationships"] = [relationship.name: ["data": identifier]]
            write = try documents.write(.object(members), for: resource, at: "/data", resolve: resolve)
            _ = try update(resource, id: id, write, at: pointer, db: db)
            return
        }
        guard case .array(let items) = data else {
            throw JSONAPIProblem(.badRequest, "a to-many relationship takes an array", pointer: pointer)
        }
        var ids: [String] = []
        for (index, item) in items.enumerated() {
            ids.append(try documents.identity(item, at: "\(pointer)/\(index)", resolve: resolve).1)
        }
        switch method {
        case .post: try point(relationship, of: resource, id: id, adding: ids, at: pointer, db: db)
        case .delete: try point(relationship, of: resource, id: id, removing: ids, db: db)
        default: try replace(relationship, of: resource, id: id, with: ids, at: pointer, db: db)
        }
    }

    /// Makes `ids` the whole of a `has_many`: the records no longer listed point nowhere.
    func replace(
        _ relationship: RelationshipSchema, of resource: ResourceSchema, id: String, with ids: [String],
        at pointer: String, db: any SQLConnection
    ) throws {
        guard let target = store.schema.resource(singular: relationship.targetName) else { return }
        let key = relationship.foreignKeyName(owner: resource)
        let leaving = try store.ids(target, whereKey: key, is: id, db: db).filter { !ids.contains($0) }
        try point(relationship, of: resource, id: id, removing: leaving, db: db)
        try point(relationship, of: resource, id: id, adding: ids, at: pointer, db: db)
    }

    private func point(
        _ relationship: RelationshipSchema, of resource: ResourceSchema, id: String, adding ids: [String],
        at pointer: String, db: any SQLConnection
    ) throws {
        guard let target = store.schema.resource(singular: relationship.targetName) else { return }
        let key = relationship.foreignKeyName(owner: resource)
        for member in ids {
            do {
                guard
                    try store.update(
                        target, id: member, attributes: [key: JSONAPIDocuments.key(id, idType: store.schema.idType)],
                        db: db) != nil
                else {
                    throw JSONAPIProblem(.notFound, "no \(target.name) \(member)", pointer: pointer)
                }
            } catch let error as RecordValidationError {
                throw JSONAPIProblem(.unprocessableContent, errors: documents.errors(error, for: target, at: pointer))
            }
        }
    }

    private func point(
        _ relationship: RelationshipSchema, of resource: ResourceSchema, id: String, removing ids: [String],
        db: any SQLConnection
    ) throws {
        guard let target = store.schema.resource(singular: relationship.targetName) else { return }
        let key = relationship.foreignKeyName(owner: resource)
        for member in ids {
            guard let record = try store.show(target, id: member, db: db),
                JSONAPIDocuments.text(record[key]) == id
            else { continue }
            _ = try store.update(target, id: member, attributes: [key: .null], db: db)
        }
    }
}
