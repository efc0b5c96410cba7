import Foundation
import HTTPTypes

extension ResourceModel {
    // MARK: - Class actions

    /// Fetches one record (`GET /trains/1`) and returns the store's instance for it.
    ///
    /// ```swift
    /// let train = try await Train.get(id: 1)
    /// let again = try await Train.get(id: 1)   // again === train
    /// ```
    ///
    /// - Parameters:
    ///   - id: An integer or string id.
    ///   - store: The identity map to merge into; default ``ResourceStore/default``.
    /// - Returns: The live instance, updated with the response.
    /// - Throws: ``APIError``: ``APIError/Code/httpStatus`` (404 and others), a transport code,
    ///   ``APIError/Code/decodingFailed`` naming the field and JSON path, or
    ///   ``APIError/Code/inconsistentResponse`` when the server answers with another record.
    public static func get(id: some ResourceIDConvertible, in store: ResourceStore = .default) async throws -> Self {
        let id = id.resourceID
        let context = store.context(for: Self.self)
        let path = try context.path(for: context.conventions.routes.show, id: id)
        let response = try await context.send(.get, path, action: .show)
        return try mergeRecord(response, context: context, store: store, expecting: id, target: nil, mode: .read)
    }

    /// Fetches every record (`GET /trains`).
    ///
    /// - Parameter store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``APIError``, as ``get(id:in:)``; a list naming one id twice is
    ///   ``APIError/Code/inconsistentResponse``.
    public static func get(in store: ResourceStore = .default) async throws -> [Self] {
        try await get(where: [:], in: store)
    }

    /// Fetches the records matching filter parameters (`GET /trains?company=MonoRail%20Co.`).
    ///
    /// ```swift
    /// let cars = try await Car.get(where: ["train_id": 1, "needs_repairs": true])
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: Query parameters; arrays and nested objects use Rails brackets.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``APIError``, as ``get(in:)``.
    public static func get(where parameters: [String: JSONValue], in store: ResourceStore = .default) async throws
        -> [Self]
    {
        let context = store.context(for: Self.self)
        let path = try context.path(for: context.conventions.routes.index)
        let response = try await context.send(.get, path, query: parameters, action: .index)
        return try mergeList(response, context: context, store: store)
    }

    /// Searches records (Objects' search verb): `GET /trains?q=Mono` with Rails conventions,
    /// `?search=` with Django REST framework, or `/train/Mono` when the route has a `:term`.
    ///
    /// - Parameters:
    ///   - term: The search term.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``APIError``, as ``get(in:)``.
    public static func search(_ term: String, in store: ResourceStore = .default) async throws -> [Self] {
        let context = store.context(for: Self.self)
        let route = context.conventions.routes.search
        let inPath = route.placeholders.contains("term")
        let path = try context.path(for: route, term: term)
        let query: [String: JSONValue] = inPath ? [:] : [context.conventions.searchParameter: .string(term)]
        let response = try await context.send(.get, path, query: query, action: .search)
        return try mergeList(response, context: context, store: store)
    }

    // MARK: - Instance actions

    /// Creates the record on the server (`POST /trains` with `{"train": {…}}`); the instance takes the
    /// new id and joins the store.
    ///
    /// A record with a ``FileUpload`` to send goes out as `multipart/form-data`
    /// (`train[photo]` file parts beside `train[company]` fields).
    ///
    /// - Parameters:
    ///   - store: The store to join; default: the instance's store, else ``ResourceStore/default``.
    ///   - uploadProgress: Called as the body is sent, for example while a file uploads.
    /// - Throws: ``APIError``: ``APIError/Code/validationFailed`` with ``APIError/errors`` for a 422 (the
    ///   instance keeps its edits), or as ``ResourceModel/get(id:in:)``.
    public func create(
        in store: ResourceStore? = nil, uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws {
        let snapshot = _$record.snapshot()
        if let id = snapshot.id {
            throw APIError(
                .invalidRequest,
                "\(Self.resourceSchema.typeName) \(id.debugText) already exists on the server; use save()")
        }
        let store = store ?? snapshot.store ?? .default
        let context = store.context(for: Self.self)
        let (body, files) = try Self.encodeBody(
            snapshot.values, only: nil, context: context, action: .create, store: store)
        let path = try context.path(for: context.conventions.routes.create)
        let response = try await context.send(
            .post, path, body: body, files: files, action: .create, uploadProgress: uploadProgress)
        _ = try Self.mergeRecord(
            response, context: context, store: store, expecting: nil, target: self, mode: .saved(sent: snapshot.edits))
    }

    /// Saves the record: updates it (`PUT /trains/1`, or `PATCH`) when it exists, else ``create(in:)``.
    ///
    /// Edits made while the request is in flight stay pending; the ones sent become the saved state.
    /// A ``FileUpload`` field is sent (as `multipart/form-data`) while it holds bytes; once the
    /// server answers with the stored file it is not sent again.
    ///
    /// - Parameter uploadProgress: Called as the body is sent, for example while a file uploads.
    /// - Throws: ``APIError``, as ``create(in:uploadProgress:)``.
    public func save(uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil) async throws {
        let snapshot = _$record.snapshot()
        guard let id = snapshot.id else {
            try await create(uploadProgress: uploadProgress)
            return
        }
        let store = snapshot.store ?? .default
        let context = store.context(for: Self.self)
        let conventions = context.conventions
        let only = conventions.sendsOnlyChanges ? snapshot.edits.indices.filter { snapshot.edits[$0] != 0 } : nil
        let (body, files) = try Self.encodeBody(
            snapshot.values, only: only, context: context, action: .update, store: store)
        let path = try context.path(for: conventions.routes.update, id: id)
        let response = try await context.send(
            conventions.updateMethod, path, body: body, files: files, action: .update, uploadProgress: uploadProgress)
        if response.body.isEmpty {
            _$record.markSaved(sent: snapshot.edits)
            return
        }
        _ = try Self.mergeRecord(
            response, context: context, store: store, expecting: id, target: self, mode: .saved(sent: snapshot.edits))
    }

    /// Reloads the record in place (`GET /trains/1`); unsaved edits are kept.
    ///
    /// - Throws: ``APIError``: ``APIError/Code/notPersisted`` when the record has no id, or as
    ///   ``get(id:in:)``.
    public func fetch() async throws {
        let snapshot = _$record.snapshot()
        guard let id = snapshot.id else { throw notPersisted("fetch") }
        let store = snapshot.store ?? .default
        let context = store.context(for: Self.self)
        let path = try context.path(for: context.conventions.routes.show, id: id)
        let response = try await context.send(.get, path, action: .show)
        _ = try Self.mergeRecord(response, context: context, store: store, expecting: id, target: self, mode: .read)
    }

    /// Deletes the record (`DELETE /trains/1`) and removes it from the store.
    ///
    /// The instance keeps its values and id; ``isDeleted`` becomes `true`.
    ///
    /// - Throws: ``APIError``: ``APIError/Code/notPersisted`` when the record has no id, or as
    ///   ``get(id:in:)``.
    public func delete() async throws {
        let snapshot = _$record.snapshot()
        guard let id = snapshot.id else { throw notPersisted("delete") }
        let store = snapshot.store ?? .default
        let context = store.context(for: Self.self)
        let path = try context.path(for: context.conventions.routes.destroy, id: id)
        _ = try await context.send(.delete, path, action: .destroy)
        store.remove(self, id: id)
        _$record.state.withLock { $0.isDeleted = true }
        _$record.announce(.deleted, fields: [], of: self)
    }

    // MARK: - Helpers

    private func notPersisted(_ action: String) -> APIError {
        APIError(
            .notPersisted, "cannot \(action) a \(Self.resourceSchema.typeName) that has not been created on the server")
    }

    static func encodeBody(
        _ values: FieldValues, only indices: [Int]?, context: ModelContext<Self>, action: ResourceAction,
        store: ResourceStore
    ) throws -> (JSONValue, FileAttachments) {
        let coder = FieldCoder(options: context.coding)
        let fields = resourceSchema.fields
        var object: [String: JSONValue] = [:]
        for index in indices ?? Array(fields.indices) {
            guard fields[index].isSent else {
                // Embedded records go back only as Rails nested attributes, and only when asked for.
                guard let embedded = fields[index].embedded, nestedAttributes.contains(fields[index].name) else {
                    continue
                }
                do {
                    object[context.wireKeys[index] + "_attributes"] = try embedded.encodeNested(values, store)
                } catch {
                    throw APIError(
                        .encodingFailed,
                        "\(resourceSchema.typeName).\(fields[index].name) cannot be encoded: \(error)",
                        underlyingError: error)
                }
                continue
            }
            do {
                let value = try fields[index].encode(values, coder)
                // A file the server already has (or none) is not sent: there is nothing to upload.
                if fields[index].isUpload, value.isNull { continue }
                object[context.wireKeys[index]] = value
            } catch {
                throw APIError(
                    .encodingFailed,
                    "\(resourceSchema.typeName).\(fields[index].name) cannot be encoded: \(error)",
                    underlyingError: error)
            }
        }
        do {
            return (try customSerialize(.object(object), for: action), coder.attachments)
        } catch {
            throw APIError(
                .encodingFailed, "\(resourceSchema.typeName).customSerialize failed: \(error)", underlyingError: error)
        }
    }

    static func mergeRecord(
        _ response: APIResponse, context: ModelContext<Self>, store: ResourceStore, expecting id: ResourceID?,
        target: Self?, mode: ResourceRecord<Self>.MergeMode
    ) throws -> Self {
        do {
            let located = try context.record(in: response)
            let coder = FieldCoder(options: context.coding)
            let patch = try context.decoder(coder: coder, store: store).decode(
                located.main, at: RecordLocation(base: located.path))
            let sideloaded = try context.sideloaded(located, store: store)
            if let id, patch.id.description != id.description {
                throw APIError(
                    .inconsistentResponse,
                    "asked for \(resourceSchema.typeName) \(id.debugText), the server answered with \(patch.id.debugText)"
                )
            }
            let (merged, side) = try store.mergeKeepingSideloads(
                [patch], sideloaded: sideloaded, target: target, mode: mode, coder: coder)
            if !side.isEmpty { resourceSchema.adoptRelated(merged) }
            guard let instance = merged.first else {
                throw APIError(.inconsistentResponse, "the response held no \(resourceSchema.typeName)")
            }
            return instance
        } catch {
            throw context.attach(error, to: response)
        }
    }

    static func mergeList(_ response: APIResponse, context: ModelContext<Self>, store: ResourceStore) throws -> [Self] {
        do {
            let coder = FieldCoder(options: context.coding)
            let decoder = context.decoder(coder: coder, store: store)
            let located: ModelContext<Self>.Located<[RecordPatch<Self>]>
            if let packed = context.packedRecords(in: response, decoder: decoder) {
                located = packed
            } else {
                let list = try context.records(in: response)
                var patches: [RecordPatch<Self>] = []
                patches.reserveCapacity(list.main.count)
                for index in 0..<list.main.count {
                    patches.append(
                        try decoder.decode(list.main[index], at: RecordLocation(base: list.path, index: index)))
                }
                located = .init(main: patches, path: list.path, container: list.container, rootKey: list.rootKey)
            }
            try RecordPatch.requireDistinctIDs(located.main, at: located.path)
            let (merged, side) = try store.mergeKeepingSideloads(
                located.main, sideloaded: try context.sideloaded(located, store: store), target: nil, mode: .read,
                coder: coder)
            if !side.isEmpty { resourceSchema.adoptRelated(merged) }
            return merged
        } catch {
            throw context.attach(error, to: response)
        }
    }
}
