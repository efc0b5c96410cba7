import Foundation
import HTTPTypes
import Tracing

// A graph made offline — a record created in the outbox and the writes naming it — sent as one
// JSON:API Atomic Operations request: the server carries out all of it or none, and each result
// merges into its write's instance as that write's own answer would.
extension OutboxReplay {
    func atomicOperationsPath(in store: ResourceStore) -> String? {
        let setup = store.setup(for: Model.self)
        return setup.jsonAPI == nil ? nil : setup.atomicOperationsPath
    }

    func operation(for write: PendingWrite, in store: ResourceStore) throws -> JSONValue {
        let setup = store.setup(for: Model.self)
        switch write.verb {
        case .destroy:
            guard let id = write.id else {
                throw APIError(.invalidRequest, "a \(setup.typeName) delete names no record")
            }
            return [
                "op": "remove",
                "ref": JSONAPIDocument.identifier(type: setup.resourceType, id: id.description, isLocal: id.isLocal),
            ]
        case .index, .show, .search:
            throw APIError(.invalidRequest, "a \(write.verb.rawValue) is not kept in the outbox")
        case .create, .update:
            guard case .object(var data)? = write.body?["data"] else {
                throw APIError(.invalidRequest, "a kept \(setup.typeName) write holds no JSON:API resource object")
            }
            if let id = write.id, id.isLocal {
                data["id"] = nil
                data["lid"] = .string(id.description)
            }
            return ["op": write.verb == .create ? "add" : "update", "data": Self.lids(in: .object(data))]
        }
    }

    /// The linkage in a resource object with each local id as a `lid`.
    private static func lids(in value: JSONValue) -> JSONValue {
        switch value {
        case .object(var members):
            if case .string(let id)? = members["id"], ResourceID.string(id).isLocal, members["type"] != nil {
                members["id"] = nil
                members["lid"] = .string(id)
                return .object(members)
            }
            return .object(members.mapValues(lids(in:)))
        case .array(let items):
            return .array(items.map(lids(in:)))
        default:
            return value
        }
    }

    func absorb(
        result: JSONValue, of response: APIResponse, write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore
    ) async -> Outbox.Outcome {
        let pipeline = ActionPipeline<Model>(store: store)
        do {
            let prepared = try self.prepared(write, entry: entry, pipeline: pipeline, store: store)
            let body = result["data"].map { JSONWriter.serialize(["data": $0]) } ?? Data()
            var head = HTTPResponse(status: write.verb == .create ? .created : .ok)
            head.headerFields[.contentType] = JSONAPIDocument.mediaType
            let answer = APIResponse(
                request: response.request, response: head, body: body, decoder: pipeline.setup.client.responseDecoder)
            return try await absorb(
                answer, prepared: prepared, sent: store.stamp(), write: write, entry: entry, in: store)
        } catch let error as APIError {
            return Self.outcome(of: error, attempts: write.attempts)
        } catch {
            return .rejected(APIError(.invalidRequest, "\(error)", underlyingError: error))
        }
    }

    func send(_ batch: [Outbox.BatchMember], key: String, in store: ResourceStore) async -> [Outbox.Outcome] {
        await Self.traced(batch.map(\.write), in: store) { span in
            let outcomes = await sending(batch, key: key, in: store)
            span?.attributes["monorail.outbox.outcome"] = outcomes.map(\.name).joined(separator: ",")
            return outcomes
        }
    }

    private func sending(_ batch: [Outbox.BatchMember], key: String, in store: ResourceStore) async
        -> [Outbox.Outcome]
    {
        let pipeline = ActionPipeline<Model>(store: store)
        let setup = pipeline.setup
        // A graph was formed where the server served the extension, perhaps in an earlier process
        // that heard it say so: it goes to the same path again, under its key, advertised or not yet.
        guard setup.jsonAPI != nil, let path = setup.conventions.atomicOperations.path else {
            let error = APIError(
                .invalidRequest,
                "\(setup.typeName) writes kept as one atomic request cannot be sent: the conventions send no "
                    + "atomic operations now (atomicOperations is .never); save the records again")
            return batch.map { _ in .rejected(error) }
        }
        let operations: [JSONValue]
        do {
            operations = try batch.map { try $0.replay.operation(for: $0.write, in: store) }
        } catch let error as APIError {
            return batch.map { _ in .rejected(error) }
        } catch {
            return batch.map { _ in .rejected(APIError(.invalidRequest, "\(error)", underlyingError: error)) }
        }
        let response: APIResponse
        do {
            response = try await pipeline.exchange.send(
                pipeline.atomicRequest(operations, path: path), Exchange.Preconditions(idempotencyKey: key))
        } catch let error as APIError {
            return Self.outcomes(of: error, for: batch)
        } catch {
            let failure = APIError(.transport, "\(error)", underlyingError: error)
            return batch.map { _ in .unreachable(failure, retryAfter: nil) }
        }
        let results: [JSONValue]
        do {
            guard case .array(let list)? = try response.json()["atomic:results"], list.count == batch.count else {
                throw APIError(
                    .inconsistentResponse,
                    "the atomic operations' answer holds no \"atomic:results\" with one result per operation",
                    response: response.response)
            }
            results = list
        } catch let error as APIError {
            return batch.map { _ in .unreachable(error, retryAfter: nil) }
        } catch {
            let failure = APIError(.inconsistentResponse, "\(error)", underlyingError: error)
            return batch.map { _ in .unreachable(failure, retryAfter: nil) }
        }
        // Each result merges as its write's answer, the ids earlier results gave in place of local ones.
        var replaced: [String: ResourceID] = [:]
        var outcomes: [Outbox.Outcome] = []
        for (member, result) in zip(batch, results) {
            let write = member.write.replacingLocalIDs(replaced)
            let outcome = await member.replay.absorb(
                result: result, of: response, write: write, entry: member.entry, in: store)
            if case .confirmed(let newID?, _) = outcome, let local = member.write.id, local.isLocal {
                replaced[local.description] = newID
            }
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// A refused request's outcome for each write: the operation the errors point at
    /// (`/atomic:operations/1/data/attributes/company`) refused with its own errors, the others
    /// with the graph they were rolled back with.
    private static func outcomes(of error: APIError, for batch: [Outbox.BatchMember]) -> [Outbox.Outcome] {
        guard case .rejected = outcome(of: error, attempts: batch.first?.write.attempts ?? 1) else {
            return batch.map { outcome(of: error, attempts: $0.write.attempts) }
        }
        let objects = error.errorObjects
        let refused = Set(
            objects.compactMap { object -> Int? in
                guard let pointer = object.pointer, pointer.hasPrefix("/atomic:operations/") else { return nil }
                return Int(pointer.dropFirst("/atomic:operations/".count).prefix { $0 != "/" })
            }
        ).filter { batch.indices.contains($0) }
        guard !refused.isEmpty else { return batch.map { _ in .rejected(error) } }
        return batch.indices.map { index in
            guard refused.contains(index) else {
                return .rejected(
                    APIError(
                        .dependencyRejected,
                        "\(batch[index].write.model) write \(batch[index].write.sequence) was sent with others in one "
                            + "atomic request, and the server refused all of it: \(error.message)",
                        underlyingError: error))
            }
            // The operation's own errors, their pointers made to point into its document.
            let prefix = "/atomic:operations/\(index)"
            let messages = objects.compactMap { object -> (field: String, message: String)? in
                guard let pointer = object.pointer, pointer.hasPrefix(prefix + "/") || pointer == prefix else {
                    return nil
                }
                var own = object
                own.pointer = String(pointer.dropFirst(prefix.count))
                return own.fieldMessage
            }
            var own = error
            if !messages.isEmpty {
                own.code = .validationFailed
                own.validationErrors = ValidationErrors(grouping: messages)
            }
            return .rejected(own)
        }
    }
}
