import Foundation
import HTTPTypes

// A to-many relationship's members changed on the server without sending the whole record: with
// JSON:API, at the relationship's own endpoint (`POST /trains/1/relationships/depots` adds,
// `DELETE` removes, `PATCH` replaces); with any other conventions, as a save of the owner whose
// list of ids changed.

extension Related where Value: Sequence, Value.Element: ResourceModel {
    /// Adds records to a `@References(.many)` relationship on the server.
    ///
    /// ```swift
    /// try await train.$depots.add([north])   // POST /trains/1/relationships/depots  (JSON:API)
    /// ```
    ///
    /// With JSON:API, the relationship's endpoint is sent the records' linkage, and what the server
    /// answers becomes the relationship's server state: the owner's other edits stay unsent. With
    /// other conventions the owner is saved with the ids added, as ``ResourceModel/save(uploadProgress:)``
    /// saves it.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/invalidRequest`` for a relationship that is no
    ///   `@References(.many)`; ``/MonoRailClient/APIError/Code/notPersisted`` when the owner or a
    ///   record has no id yet; otherwise what the request threw, the relationship unchanged.
    public func add(_ records: [Value.Element]) async throws {
        try await change(.post, records) { ids, added in ids + added.filter { !ids.contains($0) } }
    }

    /// Removes records from a `@References(.many)` relationship on the server: `DELETE
    /// /trains/1/relationships/depots` with JSON:API; see ``add(_:)``.
    public func remove(_ records: [Value.Element]) async throws {
        try await change(.delete, records) { ids, removed in ids.filter { !removed.contains($0) } }
    }

    /// Makes the records the whole of a `@References(.many)` relationship on the server: `PATCH
    /// /trains/1/relationships/depots` with JSON:API; see ``add(_:)``.
    public func replace(with records: [Value.Element]) async throws {
        try await change(.patch, records) { _, replacing in replacing }
    }

    private func change(
        _ method: HTTPRequest.Method, _ records: [Value.Element],
        _ membership: ([ResourceID], [ResourceID]) -> [ResourceID]
    ) async throws {
        let typeName = Owner.resourceSchema.typeName
        let fields = Owner.resourceSchema.fields
        guard let index = fields.firstIndex(where: { $0.name == name }), case .many? = fields[index].linkage else {
            throw APIError(.invalidRequest, "\(typeName).\(name) is not a @References(.many) relationship")
        }
        let (ownerID, store) = owner._$state.state.withLock { ($0.id, $0.store ?? .default) }
        guard let ownerID, !ownerID.isLocal else {
            throw APIError(.notPersisted, "\(typeName) has no id on the server yet: create it before changing \(name)")
        }
        let ids = try records.map { record in
            guard let id = record.id, !id.isLocal else {
                throw APIError(
                    .notPersisted,
                    "a \(Value.Element.resourceSchema.typeName) added to \(typeName).\(name) has no id on the server yet"
                )
            }
            return id
        }
        let setup = store.setup(for: Owner.self)
        let current = owner._$state.state.withLock { state in
            (try? fields[index].encode(state.server, FieldCoder(options: setup.coding)))?.arrayValue ?? []
        }.compactMap(ResourceID.init(json:))
        let wanted = membership(current, ids)
        guard setup.jsonAPI != nil else {
            owner._$state.setWireValue(
                .array(wanted.map(\.jsonValue)), at: index, of: owner, coder: FieldCoder(options: setup.coding))
            try await owner.save()
            return
        }
        let pipeline = ActionPipeline<Owner>(store: store)
        let answered = try await pipeline.sendMembership(
            method, ids: ids, of: owner, id: ownerID, relationship: setup.coding.keyMapping.wireKey(for: name),
            relatedType: fields[index].related?.resourceType(store) ?? "")
        let members = answered ?? wanted
        try owner._$state.takeServerValue(
            .array(members.map(\.jsonValue)), at: index, of: owner, coder: FieldCoder(options: setup.coding))
    }
}

extension ActionPipeline {
    /// Sends linkage to a relationship's JSON:API endpoint; returns the members the server answered
    /// with, or `nil` for an answer without them (`204 No Content`).
    func sendMembership(
        _ method: HTTPRequest.Method, ids: [ResourceID], of owner: Model, id: ResourceID, relationship: String,
        relatedType: String
    ) async throws -> [ResourceID]? {
        let path = try membershipPath(of: owner, id: id, relationship: relationship)
        let linkage = ids.map { JSONAPIDocument.identifier(type: relatedType, id: $0.description) }
        let prepared = Prepared(
            ModelAction(operation: .save(owner), store: store), method, path, parameters: [:], id: id,
            body: (["data": .array(linkage)], FileAttachments()))
        // Adding twice adds once, but a POST is not retried on a reset: its answer may have been lost.
        let response = try await send(prepared, retries: method != .post)
        guard !response.body.isEmpty else { return nil }
        let document: JSONValue
        do {
            document = try response.json()
        } catch {
            throw setup.attach(error, to: response)
        }
        guard case .array(let items)? = document["data"] else { return nil }
        return try items.enumerated().map { offset, item in
            guard case .string(let text)? = item["id"], !text.isEmpty else {
                let detail = DecodingFailure(
                    typeName: setup.typeName, key: "id", path: "$.data[\(offset)].id",
                    reason: "a resource identifier needs an \"id\" string, found \(item)")
                throw setup.attach(
                    APIError(decodingFailure: detail), to: response)
            }
            return .string(text)
        }
    }
}
