import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient

// The Atomic Operations extension (https://jsonapi.org/ext/atomic): `POST /operations` with
// `{"atomic:operations": [{"op": "add", "data": {…, "lid": "t1"}}, …]}` carries out every operation
// in one transaction, in order, a `lid` naming in later operations the record an earlier `add`
// created; it answers `{"atomic:results": [{"data": …}, …]}`, or, for one refused operation, the
// errors of that operation (their pointers under `/atomic:operations/<index>`) with nothing written.
extension JSONAPIRoutes {
    static let atomicMediaType = "\(JSONAPIDocuments.mediaType); ext=\"\(JSONAPIDocument.atomicExtension)\""

    func operations(_ request: Request) async throws -> Response {
        guard try extensions(of: request).contains(JSONAPIDocument.atomicExtension) else {
            throw JSONAPIProblem(
                .unsupportedMediaType, "POST /operations takes \(Self.atomicMediaType)")
        }
        guard case .object(let document) = try await body(request) else {
            throw JSONAPIProblem(.badRequest, "a document is an object")
        }
        return try await records.writes.run(request, read: document) { document, db in
            guard case .array(let operations)? = document?["atomic:operations"], !operations.isEmpty else {
                throw JSONAPIProblem(
                    .badRequest, "the document needs a non-empty \"atomic:operations\" array",
                    pointer: "/atomic:operations")
            }
            var lids: [String: String] = [:]
            var results: [JSONValue] = []
            for (index, operation) in operations.enumerated() {
                let pointer = "/atomic:operations/\(index)"
                results.append(try carryOut(operation, at: pointer, lids: &lids, db: db))
            }
            var answer = Self.answer(.ok, ["atomic:results": .array(results)])
            answer.headers[.contentType] = Self.atomicMediaType
            return answer
        }
    }

    /// One operation, inside the transaction of all of them; its result.
    private func carryOut(
        _ operation: JSONValue, at pointer: String, lids: inout [String: String], db: any SQLConnection
    ) throws -> JSONValue {
        guard case .string(let op)? = operation["op"] else {
            throw JSONAPIProblem(.badRequest, "an operation needs an \"op\"", pointer: pointer + "/op")
        }
        let known = lids
        let resolve: (String) -> String? = { known[$0] }
        if let ref = operation["ref"], case .string(let name)? = ref["relationship"] {
            // A relationship's members: add, update (replace) or remove.
            let (resource, id) = try documents.identity(ref, at: pointer + "/ref", resolve: resolve)
            guard let relationship = resource.relationships?.first(where: { $0.name == name }) else {
                throw JSONAPIProblem(
                    .badRequest, "\(name) is no relationship of \(resource.pluralName)", pointer: pointer + "/ref")
            }
            let method: HTTPRequest.Method =
                switch op {
                case "add": .post
                case "remove": .delete
                default: .patch
                }
            try change(
                relationship, of: resource, id: id, data: operation["data"], method: method, at: pointer + "/data",
                db: db, resolve: resolve)
            return [:]
        }
        switch op {
        case "add":
            guard case .string(let type)? = operation["data"]?["type"], let resource = documents.resource(type: type)
            else {
                throw JSONAPIProblem(.badRequest, "an add needs data of a known type", pointer: pointer + "/data/type")
            }
            let write = try documents.write(operation["data"], for: resource, at: pointer + "/data", resolve: resolve)
            let record = try create(resource, write, at: pointer + "/data", db: db)
            if let lid = write.lid, let id = JSONAPIDocuments.text(record[resource.primaryKeyName]) {
                guard lids[lid] == nil else {
                    throw JSONAPIProblem(
                        .badRequest, "the lid \"\(lid)\" is used twice", pointer: pointer + "/data/lid")
                }
                lids[lid] = id
            }
            var object = documents.resourceObject(record, resource)
            if let lid = write.lid, case .object(var members) = object {
                members["lid"] = .string(lid)
                object = .object(members)
            }
            return ["data": object]
        case "update":
            let target = operation["ref"] ?? operation["data"] ?? .null
            let (resource, id) = try documents.identity(
                target, at: pointer + (operation["ref"] == nil ? "/data" : "/ref"), resolve: resolve)
            var data = operation["data"]
            // A lid in the data names the record by the id it became.
            if case .object(var members)? = data, members["id"] == nil, members["lid"] != nil {
                members["id"] = .string(id)
                data = .object(members)
            }
            let write = try documents.write(data, for: resource, at: pointer + "/data", resolve: resolve)
            let record = try update(resource, id: id, write, at: pointer + "/data", db: db)
            return ["data": documents.resourceObject(record, resource)]
        case "remove":
            let (resource, id) = try documents.identity(
                operation["ref"] ?? .null, at: pointer + "/ref", resolve: resolve)
            guard try store.delete(resource, id: id, db: db) else {
                throw JSONAPIProblem(.notFound, "no \(resource.name) \(id)", pointer: pointer + "/ref")
            }
            return [:]
        default:
            throw JSONAPIProblem(
                .badRequest, "\"\(op)\" is no operation: add, update or remove", pointer: pointer + "/op")
        }
    }
}
