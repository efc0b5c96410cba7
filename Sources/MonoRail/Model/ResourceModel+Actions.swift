public import Foundation
import HTTPTypes

extension ResourceModel {
    // MARK: - Class actions

    /// Fetches one record (`GET /trains/1`) and returns the store's instance for it.
    ///
    /// ```swift
    /// let train = try await Train.get(id: 1)
    /// let again = try await Train.get(id: 1)   // again === train
    /// let full = try await Train.get(id: 1, include: ["cars"])   // GET /trains/1?include=cars
    /// ```
    ///
    /// - Parameters:
    ///   - id: An integer or string id.
    ///   - include: Related models to side-load, sent as `?include=cars,conductor` (the
    ///     conventions' ``ServerConventions/includeParameter``); their records merge with this one.
    ///   - parameters: More query parameters.
    ///   - policy: Where to look for the record: the network, the record cache, or both; default the
    ///     model's ``MonoRail/Configuration/cachePolicy``.
    ///   - store: The identity map to merge into; default ``ResourceStore/default``.
    /// - Returns: The live instance, updated with the response.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/httpStatus`` (404 and others), a transport code,
    ///   ``/MonoRailClient/APIError/Code/decodingFailed`` naming the field and JSON path,
    ///   ``/MonoRailClient/APIError/Code/inconsistentResponse`` when the server answers with another record
    ///   or with one the store heard was deleted after the request was sent, or
    ///   ``/MonoRailClient/APIError/Code/notCached`` for ``CachePolicy/cacheOnly`` when the cache lacks it.
    public static func get(
        id: some ResourceIDConvertible, include: [String] = [], parameters: [String: JSONValue] = [:],
        policy: CachePolicy? = nil, in store: ResourceStore = .default
    ) async throws -> Self {
        let pipeline = ActionPipeline<Self>(store: store)
        if include.isEmpty, parameters.isEmpty, let coalescing = pipeline.setup.conventions.coalescedLoads,
            (policy ?? pipeline.setup.cachePolicy) == .networkOnly
        {
            return try await store.loadBatcher.get(Self.self, id: id.resourceID, window: coalescing.window, in: store)
        }
        return try await pipeline.record(
            ModelAction(
                operation: .get(id.resourceID), include: include, parameters: parameters, store: store, policy: policy)
        ).value
    }

    /// ``get(id:include:parameters:policy:in:)``, with the status, header fields, links and source of the
    /// answer.
    ///
    /// ```swift
    /// let answer = try await Train.response(id: 1)
    /// answer.value.company     // the live instance
    /// answer.etag              // "\"a1b2\""
    /// ```
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(id:include:parameters:policy:in:)``.
    public static func response(
        id: some ResourceIDConvertible, include: [String] = [], parameters: [String: JSONValue] = [:],
        policy: CachePolicy? = nil, in store: ResourceStore = .default
    ) async throws -> ResourceResponse<Self> {
        try await ActionPipeline<Self>(store: store).record(
            ModelAction(
                operation: .get(id.resourceID), include: include, parameters: parameters, store: store, policy: policy))
    }

    /// Fetches the one record of a singleton resource, a route with no id (`GET /user.json`;
    /// ApiModel's `Api.find`), and returns the store's instance for it: the same instance each
    /// time, or the instance of its id when the record has one.
    ///
    /// ```swift
    /// @Resource final class User {
    ///     var email: String?
    ///     static func configure(_ configuration: inout MonoRail.Configuration) {
    ///         configuration.conventions.routes = .singleton("/user.json")
    ///     }
    /// }
    /// let user = try await User.current()
    /// user.email = "ada@example.com"
    /// try await user.save()   // PUT /user.json
    /// ```
    ///
    /// - Parameters:
    ///   - include: Related models to side-load, as in ``get(id:include:parameters:policy:in:)``.
    ///   - parameters: More query parameters.
    ///   - store: The identity map to merge into.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/invalidRequest`` when the model's show route needs an
    ///   id, or as ``get(id:include:parameters:policy:in:)``.
    public static func current(
        include: [String] = [], parameters: [String: JSONValue] = [:], in store: ResourceStore = .default
    ) async throws -> Self {
        try await ActionPipeline<Self>(store: store).record(
            ModelAction(operation: .singleton, include: include, parameters: parameters, store: store)
        ).value
    }

    /// Fetches every record (`GET /trains`).
    ///
    /// - Parameters:
    ///   - policy: Where to look for the list, as in ``get(id:include:parameters:policy:in:)``. A
    ///     cached list answers only when every record it held is still cached.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(id:include:parameters:policy:in:)``; a list naming one id
    ///   twice is ``/MonoRailClient/APIError/Code/inconsistentResponse``.
    public static func get(policy: CachePolicy? = nil, in store: ResourceStore = .default) async throws -> [Self] {
        try await get(where: [:], policy: policy, in: store)
    }

    /// Fetches the records matching filter parameters (`GET /trains?company=MonoRail%20Co.`).
    ///
    /// ```swift
    /// let cars = try await Car.get(where: ["train_id": 1, "needs_repairs": true])
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: Query parameters; arrays and nested objects use Rails brackets.
    ///   - include: Related models to side-load, as in ``get(id:include:parameters:policy:in:)``.
    ///   - policy: Where to look for the list, as in ``get(policy:in:)``.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(policy:in:)``.
    public static func get(
        where parameters: [String: JSONValue], include: [String] = [], policy: CachePolicy? = nil,
        in store: ResourceStore = .default
    ) async throws -> [Self] {
        try await response(where: parameters, include: include, policy: policy, in: store).value
    }

    /// ``get(where:include:policy:in:)``, with the status, header fields, links and source of the answer:
    /// read paging from ``ResourceResponse/links`` and the header fields.
    ///
    /// ```swift
    /// let page = try await Train.response(where: ["page": 1])
    /// let next = page.links["next"]   // from `Link: <…?page=2>; rel="next"`
    /// ```
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(policy:in:)``.
    public static func response(
        where parameters: [String: JSONValue] = [:], include: [String] = [], policy: CachePolicy? = nil,
        in store: ResourceStore = .default
    ) async throws -> ResourceResponse<[Self]> {
        try await ActionPipeline<Self>(store: store).list(
            ModelAction(operation: .list(filter: parameters), include: include, store: store, policy: policy))
    }

    /// Reads the records at any path of the API into live instances: an endpoint that is not the
    /// model's index route, such as another resource's nested list.
    ///
    /// ```swift
    /// let gists = try await Gist.get(path: "/users/\(user)/gists")   // GET /users/octocat/gists
    /// let mine = try await Gist.get(path: "/gists/starred", parameters: ["since": "2026-01-01"])
    /// ```
    ///
    /// The answer is read as a list of the model's records (its root, envelope and side-loads as
    /// for ``get(where:include:policy:in:)``), merges into the identity map, and is kept in the
    /// record cache under its path. It never prunes: one path's list is not every record.
    ///
    /// - Parameters:
    ///   - path: A path under the API's root, interpolated values percent-encoded as one segment
    ///     each; or an absolute URL on the API's origin.
    ///   - parameters: Query parameters.
    ///   - include: Related models to side-load.
    ///   - policy: Where to look for the list, as in ``get(policy:in:)``.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/invalidRequest`` before any request for a URL off the
    ///   API's origin or a path with a `.` or `..` segment; otherwise as ``get(policy:in:)``.
    public static func get(
        path: APIPath, parameters: [String: JSONValue] = [:], include: [String] = [], policy: CachePolicy? = nil,
        in store: ResourceStore = .default
    ) async throws -> [Self] {
        try await response(path: path, parameters: parameters, include: include, policy: policy, in: store).value
    }

    /// ``get(path:parameters:include:policy:in:)``, with the status, header fields, links and source
    /// of the answer.
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(path:parameters:include:policy:in:)``.
    public static func response(
        path: APIPath, parameters: [String: JSONValue] = [:], include: [String] = [], policy: CachePolicy? = nil,
        in store: ResourceStore = .default
    ) async throws -> ResourceResponse<[Self]> {
        var action = ModelAction<Self>(
            operation: .list(filter: parameters), include: include, store: store, policy: policy)
        action.path = path
        return try await ActionPipeline<Self>(store: store).list(action)
    }

    /// Fetches every page of a list: the first page, then each page the server links or the
    /// conventions' ``Paging`` asks for, until the list ends.
    ///
    /// ```swift
    /// let trains = try await Train.getAll()                       // GET /trains, ?page=2, …
    /// let mono = try await Train.getAll(where: ["company": "MonoRail Co."])
    /// ```
    ///
    /// ``get(policy:in:)`` returns what the server answers, which is the first page on a server
    /// that pages by default; this reads on until the server says the list ended — a page that
    /// links no next one, its total reached, or, from a server that says neither, an empty page.
    /// Links are followed only on the API's origin. It always asks the network: a cache holds pages
    /// as they were read, not the list. Read in full, every record of the model is the whole list:
    /// with ``MonoRail/Configuration/prunesOrphans`` it removes the records it lacks.
    ///
    /// - Parameters:
    ///   - parameters: Filter parameters, kept on every page asked for by parameters.
    ///   - include: Related models to side-load on every page.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in page order, each once.
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(policy:in:)``; ``/MonoRailClient/APIError/Code/tooManyPages`` after
    ///   ``Paging/maximumPages`` pages with more to come.
    public static func getAll(
        where parameters: [String: JSONValue] = [:], include: [String] = [], in store: ResourceStore = .default
    ) async throws -> [Self] {
        try await ActionPipeline<Self>(store: store).everyPage(
            ModelAction(operation: .list(filter: parameters), include: include, store: store, policy: .networkOnly)
        ).value
    }

    /// Searches records (Objects' search verb): `GET /trains?q=Mono` with Rails conventions,
    /// `?search=` with Django REST framework, or `/train/Mono` when the route has a `:term`.
    ///
    /// - Parameters:
    ///   - term: The search term.
    ///   - policy: Where to look for the results, as in ``get(policy:in:)``.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in response order.
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(policy:in:)``.
    public static func search(_ term: String, policy: CachePolicy? = nil, in store: ResourceStore = .default)
        async throws -> [Self]
    {
        try await ActionPipeline<Self>(store: store).list(
            ModelAction(operation: .search(term), store: store, policy: policy)
        ).value
    }

    // MARK: - Instance actions

    /// Creates the record on the server (`POST /trains` with `{"train": {…}}`); the instance takes the
    /// new id and joins the store.
    ///
    /// A record with a ``/MonoRailClient/FileUpload`` to send goes out as `multipart/form-data`
    /// (`train[photo]` file parts beside `train[company]` fields).
    ///
    /// A record can be given its id by the app, where the server accepts ids made by its clients
    /// (JSON:API's client-generated ids, usually UUIDs): `try await train.create(id: .string(uuid))`.
    /// The id is sent with the record (`data.id`, or the id key), and the instance takes it once the
    /// server answers — or at once, when the outbox keeps the write, instead of a local id. A server
    /// that makes its ids itself answers `403 Forbidden`, one that has the id already
    /// `409 Conflict`: either is the error thrown, and the instance is left without an id. An id
    /// another instance of the store has is refused before anything is sent
    /// (``/MonoRailClient/APIError/Code/invalidRequest``).
    ///
    /// - Parameters:
    ///   - store: The store to join; default: the instance's store, else ``ResourceStore/default``.
    ///   - id: The id the app gives the record; `nil` (the default) for the server to make one.
    ///   - uploadProgress: Called as the body is sent, for example while a file uploads.
    /// - Returns: The answer's metadata — status, header fields, ``ResourceResponse/etag``, the
    ///   request — with the instance as its value; ``ResponseSource/outbox`` when the outbox kept
    ///   the write.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/validationFailed`` with ``/MonoRailClient/APIError/errors`` for a 422 (the
    ///   instance keeps its edits), or as ``ResourceModel/get(id:include:parameters:policy:in:)``.
    @discardableResult
    public func create(
        in store: ResourceStore? = nil, id: ResourceID? = nil,
        uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> ResourceResponse<Self> {
        let store = store ?? _$state.snapshot().store ?? .default
        if let id, id.isLocal {
            throw APIError(
                .invalidRequest, "\(id.debugText) is a local id: the app's ids cannot look like the outbox's")
        }
        // Two instances of one record would break the identity map: the live one is that record.
        if let id, let live = store.instance(of: Self.self, id: id), live !== self {
            throw APIError(
                .invalidRequest,
                "\(Self.resourceSchema.typeName) \(id.debugText) is live in the store already; create it with another id"
            )
        }
        let answer = try await ActionPipeline<Self>(store: store).record(
            ModelAction(operation: .create(self), clientID: id, store: store, uploadProgress: uploadProgress))
        try await _$state.saveMembership(of: self)
        return answer
    }

    /// Saves the record: updates it (`PUT /trains/1`, or `PATCH`) when it exists, else ``create(in:id:uploadProgress:)``.
    ///
    /// Edits made while the request is in flight stay pending; the ones sent become the saved state.
    /// A ``/MonoRailClient/FileUpload`` field is sent (as `multipart/form-data`) while it holds bytes; once the
    /// server answers with the stored file it is not sent again.
    ///
    /// A record the server has and the app did not change (``hasChanges`` is `false`) is not sent:
    /// the answer's ``ResourceResponse/source`` is ``ResponseSource/unchanged``. A model with
    /// ``nestedAttributes`` is always sent, for its embedded records' changes.
    ///
    /// - Parameter uploadProgress: Called as the body is sent, for example while a file uploads.
    /// - Returns: The answer's metadata with the instance as its value, as ``create(in:id:uploadProgress:)``.
    /// - Throws: ``/MonoRailClient/APIError``, as ``create(in:id:uploadProgress:)``.
    @discardableResult
    public func save(uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil) async throws
        -> ResourceResponse<Self>
    {
        let (id, isPersisted, store) = _$state.state.withLock { ($0.id, $0.isPersisted, $0.store ?? .default) }
        // A record the server keeps with no id (a singleton resource) is saved at its route; any
        // other record without one is new.
        guard
            id != nil
                || (isPersisted && !store.setup(for: Self.self).conventions.routes.update.placeholders.contains("id"))
        else {
            return try await create(uploadProgress: uploadProgress)
        }
        if !hasChanges, Self.nestedAttributes.isEmpty {
            return ResourceResponse(value: self, status: .ok, source: .unchanged)
        }
        let answer = try await ActionPipeline<Self>(store: store).record(
            ModelAction(operation: .save(self), store: store, uploadProgress: uploadProgress))
        try await _$state.saveMembership(of: self)
        return answer
    }

    /// Reloads the record in place (`GET /trains/1`); unsaved edits are kept.
    ///
    /// - Returns: The answer's metadata with the instance as its value, as ``get(id:include:parameters:policy:in:)``'s response.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/notPersisted`` when the record has no id, or as
    ///   ``get(id:include:parameters:policy:in:)``; ``/MonoRailClient/APIError/Code/inconsistentResponse`` when
    ///   the store heard the record was deleted after the request was sent, and then ``isDeleted`` is `true`.
    @discardableResult
    public func fetch() async throws -> ResourceResponse<Self> {
        let store = _$state.snapshot().store ?? .default
        return try await ActionPipeline<Self>(store: store).record(ModelAction(operation: .fetch(self), store: store))
    }

    /// Deletes the record (`DELETE /trains/1`) and removes it from the store.
    ///
    /// The instance keeps its values and id; ``isDeleted`` becomes `true`.
    ///
    /// - Returns: The answer's metadata (status, header fields, the request); ``ResponseSource/outbox``
    ///   when the outbox kept the delete.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/notPersisted`` when the record has no id, or as
    ///   ``get(id:include:parameters:policy:in:)``.
    @discardableResult
    public func delete() async throws -> ResourceResponse<Void> {
        let store = _$state.snapshot().store ?? .default
        return try await ActionPipeline<Self>(store: store).delete(ModelAction(operation: .delete(self), store: store))
    }

    /// The full URL of one of the model's routes for this record, placeholders filled as an
    /// action fills them (`:id`, and any other from the record's fields): ApiModel's
    /// `post.apiUrlForRoute(Post.apiRoutes().show)`. Makes no request.
    ///
    /// ```swift
    /// try post.apiURL(for: \.show)   // https://service.io/api/v1/post/123.json
    /// ```
    ///
    /// - Parameter route: Which of the store's ``ServerConventions/routes`` (as the model's
    ///   ``configure(_:)`` leaves them): `\.show` (the default), `\.update`, `\.destroy`, …
    /// - Throws: ``/MonoRailClient/APIError/Code/invalidRequest`` when a placeholder has no value (a new record
    ///   has no id) or no API root is configured.
    public func apiURL(for route: KeyPath<ResourceRoutes, RouteTemplate> = \.show) throws -> URL {
        let store = _$state.snapshot().store ?? .default
        let setup = store.setup(for: Self.self)
        if let failure = setup.sendingError { throw failure }
        let template = setup.conventions.routes[keyPath: route]
        let id = _$state.state.withLock(\.id)
        return try setup.client.url(for: try setup.path(for: template, id: id, instance: self))
    }

    // MARK: - Helpers

    static func encodeBody(
        _ values: FieldValues, only indices: [Int]?, setup: ModelSetup<Self>, verb: ActionVerb,
        store: ResourceStore
    ) throws -> (JSONValue, FileAttachments) {
        let coder = FieldCoder(options: setup.coding)
        let fields = resourceSchema.fields
        var object: [String: JSONValue] = [:]
        for index in indices ?? Array(fields.indices) {
            guard fields[index].isSent else {
                // Embedded records go back as Rails nested attributes when asked for; else an embedded
                // reference goes back as its ids, and what a `@Has` embeds is the children's to send.
                guard let embedded = fields[index].embedded else { continue }
                guard nestedAttributes.contains(fields[index].name) else {
                    if let reference = embedded.reference, let key = setup.referenceIDKeys[index] {
                        object[key] = try reference.ids(values)
                    }
                    continue
                }
                do {
                    object[setup.wireKeys[index] + "_attributes"] = try embedded.encodeNested(values, store)
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
                // A create leaves out what the app never set, so the server's defaults apply: a `null`
                // would override them (Rails), or be refused for a field that may not be null (DRF).
                if verb == .create, value.isNull { continue }
                object[setup.wireKeys[index]] = value
            } catch {
                throw APIError(
                    .encodingFailed,
                    "\(resourceSchema.typeName).\(fields[index].name) cannot be encoded: \(error)",
                    underlyingError: error)
            }
        }
        do {
            return (try customSerialize(.object(object), for: verb), coder.attachments)
        } catch {
            throw APIError(
                .encodingFailed, "\(resourceSchema.typeName).customSerialize failed: \(error)", underlyingError: error)
        }
    }
}
