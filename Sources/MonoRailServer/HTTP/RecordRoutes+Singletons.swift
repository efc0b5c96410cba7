import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import Logging
import MonoRailClient
import NIOCore

// Singletons: resources with one record and no id in their path (`/profile`).
extension RecordRoutes {
    /// The singleton's record: the first of its table.
    private func singletonID(_ resource: ResourceSchema) throws -> String? {
        guard let record = try store.list(resource, filters: [:], limit: 1).records.first,
            let id = record[resource.primaryKeyName]
        else { return nil }
        return id.intValue.map(String.init) ?? id.stringValue
    }

    func showSingleton(_ resource: ResourceSchema, _ request: Request) throws -> Response {
        guard let id = try singletonID(resource), let record = try store.find(resource, id: id) else {
            throw APIProblem(.notFound)
        }
        return try answer(request, resource, showing: record)
    }

    /// Creates the singleton's record, or updates it when there is one, whichever the method.
    func writeSingleton(_ resource: ResourceSchema, _ request: Request) async throws -> Response {
        let format = ResponseFormat(request)
        return try await writes.run(request, read: try await attributes(of: request, for: resource)) {
            attributes, db in
            do {
                let existing = try store.firstID(of: resource, db: db)
                let (status, record): (HTTPResponse.Status, JSONValue?) =
                    if let existing {
                        (.ok, try store.update(resource, id: existing, attributes: attributes ?? [:], db: db))
                    } else {
                        (.created, try store.create(resource, attributes: attributes ?? [:], db: db))
                    }
                guard let record else { throw APIProblem(.notFound) }
                return WriteAnswer(status, wrap([resource.name: record], main: resource.name), format: format)
            } catch let error as RecordValidationError {
                return .validation(error, envelope: envelope, root: resource.name, format: format)
            }
        }
    }

    func destroySingleton(_ resource: ResourceSchema, _ request: Request) async throws -> Response {
        try await writes.run(request, read: nil) { _, db in
            guard let id = try store.firstID(of: resource, db: db), try store.delete(resource, id: id, db: db) else {
                throw APIProblem(.notFound)
            }
            return WriteAnswer(status: .noContent)
        }
    }

    /// Deletes the record when `If-Match` (if sent) still holds.
    func destroy(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let resource = try resource(context)
        let nesting = try nesting(resource, context)
        let id = id(context)
        return try await writes.run(request, read: nil) { _, db in
            if let nesting {
                guard let record = try store.show(resource, id: id, db: db), nesting.holds(record) else {
                    throw APIProblem(.notFound)
                }
            }
            guard try preconditionHolds(request, resource, id: id, db: db) else {
                // No record and no match is a 404, as without the header.
                guard try store.show(resource, id: id, db: db) != nil else { throw APIProblem(.notFound) }
                return Self.preconditionFailed(request)
            }
            guard try store.delete(resource, id: id, db: db) else { throw APIProblem(.notFound) }
            return WriteAnswer(status: .noContent)
        }
    }

    /// The attributes sent, wrapped in the singular root (`{"train": {…}}`) or bare, read by the
    /// body's content type: JSON, MessagePack, a Rails form (`train[company]=…`) or
    /// `multipart/form-data` whose file parts are stored and become file values.
    func attributes(of request: Request, for resource: ResourceSchema) async throws -> [String: JSONValue] {
        let contentType = request.headers[.contentType]
        let tree: JSONValue
        if MultipartReceiver.isMultipart(contentType) {
            let received = try await MultipartReceiver(directory: uploadsDirectory, maxSize: maxUploadSize).receive(
                request)
            let pairs =
                received.fields.map { ($0.0, JSONValue.string($0.1)) }
                + received.files.map { ($0.field, $0.recordValue) }
            tree = typed(FormDecoder.tree(fromValues: pairs), resource: resource)
        } else {
            let buffer: ByteBuffer
            do {
                buffer = try await request.body.collect(upTo: maxBodySize)
            } catch {
                throw APIProblem(.contentTooLarge, "the body is larger than \(maxBodySize) bytes")
            }
            let data = Data(buffer.readableBytesView)
            if let contentType, WireFormat.isMessagePack(contentType) {
                do {
                    tree = try MessagePackReader().readJSON(data)
                } catch {
                    throw APIProblem(.badRequest, "the body is not valid MessagePack: \(error)")
                }
            } else if contentType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
                tree = typed(FormDecoder.decode(String(decoding: data, as: UTF8.self)), resource: resource)
            } else {
                do {
                    tree = try JSONParser().parse(data)
                } catch {
                    throw APIProblem(.badRequest, "the body is not valid JSON: \(error)")
                }
            }
        }
        guard case .object(let object) = tree else {
            throw APIProblem(.badRequest, "the body must be an object")
        }
        if envelope != .bare, object.count == 1, case .object(let wrapped)? = object[resource.name] {
            return wrapped
        }
        return object
    }

    /// Form values are all text; read them as the schema's types, as Rails does with its columns.
    func typed(_ tree: JSONValue, resource: ResourceSchema) -> JSONValue {
        guard case .object(var object) = tree else { return tree }
        let wrapped = envelope != .bare && object.count == 1 && object[resource.name]?.objectValue != nil
        var attributes = wrapped ? (object[resource.name]?.objectValue ?? [:]) : object
        for field in resource.columns(idType: store.schema.idType) {
            guard case .string(let text)? = attributes[field.name] else { continue }
            switch field.type {
            case .integer: if let number = Int64(text) { attributes[field.name] = .int(number) }
            case .float: if let number = Double(text) { attributes[field.name] = .double(number) }
            case .boolean:
                if ["true", "1"].contains(text) { attributes[field.name] = .bool(true) }
                if ["false", "0"].contains(text) { attributes[field.name] = .bool(false) }
            case .json: if let parsed = try? JSONParser().parse(Data(text.utf8)) { attributes[field.name] = parsed }
            case .string, .datetime, .file: break
            }
            if text.isEmpty, field.type != .string { attributes[field.name] = .null }
        }
        if wrapped {
            object[resource.name] = .object(attributes)
            return .object(object)
        }
        return .object(attributes)
    }
}
