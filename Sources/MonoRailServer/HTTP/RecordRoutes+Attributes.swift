import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MonoRailClient
import NIOCore

// A request body read as a resource's attributes, typed by its schema.
extension RecordRoutes {
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
