import Foundation
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
}
