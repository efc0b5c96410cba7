// The seed's callback style, kept as thin wrappers over the async API.

extension ResourceModel {
    /// Fetches one record and calls back (the seed's `Train.get(id: 1, success: { … })`).
    ///
    /// ```swift
    /// Train.get(id: 1, success: { train in print(train.company ?? "") }, failure: { error in print(error) })
    /// ```
    ///
    /// The closures run where ``MonoRail/Configuration/delivery`` says: by default on a task of the
    /// cooperative pool, not on the main thread; with ``Delivery/mainActor``, on the main actor.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public static func get(
        id: some ResourceIDConvertible, in store: ResourceStore = .default,
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<Self> {
        let id = id.resourceID
        return callback({ try await get(id: id, in: store) }, in: store, success: success, failure: failure)
    }

    /// Fetches every record and calls back.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public static func get(
        in store: ResourceStore = .default, success: @escaping @Sendable ([Self]) -> Void,
        failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<[Self]> {
        callback({ try await get(in: store) }, in: store, success: success, failure: failure)
    }

    /// Fetches the records matching filter parameters and calls back.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public static func get(
        where parameters: [String: JSONValue], in store: ResourceStore = .default,
        success: @escaping @Sendable ([Self]) -> Void, failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<[Self]> {
        callback({ try await get(where: parameters, in: store) }, in: store, success: success, failure: failure)
    }

    /// Searches and calls back.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public static func search(
        _ term: String, in store: ResourceStore = .default, success: @escaping @Sendable ([Self]) -> Void,
        failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<[Self]> {
        callback({ try await search(term, in: store) }, in: store, success: success, failure: failure)
    }

    /// Creates the record and calls back with the instance.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public func create(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<Self> {
        Self.callback(
            {
                try await self.create()
                return self
            }, in: _$state.snapshot().store ?? .default, success: success, failure: failure)
    }

    /// Saves the record and calls back with the instance.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public func save(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<Self> {
        Self.callback(
            {
                try await self.save()
                return self
            }, in: _$state.snapshot().store ?? .default, success: success, failure: failure)
    }

    /// Reloads the record and calls back with the instance.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public func fetch(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<Self> {
        Self.callback(
            {
                try await self.fetch()
                return self
            }, in: _$state.snapshot().store ?? .default, success: success, failure: failure)
    }

    /// Deletes the record and calls back with the instance.
    ///
    /// - Returns: A handle that cancels the request.
    @discardableResult
    public func delete(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (APIError) -> Void = { _ in }
    ) -> RequestHandle<Self> {
        Self.callback(
            {
                try await self.delete()
                return self
            }, in: _$state.snapshot().store ?? .default, success: success, failure: failure)
    }

    // MARK: - The seed's failure type

    // The same actions for a `failure:` closure typed as the seed wrote it,
    // `{ (error: ActiveNetworkError) in … }`; an untyped closure gets the `APIError` forms.

    /// ``get(id:in:success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public static func get(
        id: some ResourceIDConvertible, in store: ResourceStore = .default,
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<Self> {
        get(id: id, in: store, success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``get(in:success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public static func get(
        in store: ResourceStore = .default, success: @escaping @Sendable ([Self]) -> Void,
        failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<[Self]> {
        get(in: store, success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``get(where:in:success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public static func get(
        where parameters: [String: JSONValue], in store: ResourceStore = .default,
        success: @escaping @Sendable ([Self]) -> Void, failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<[Self]> {
        get(where: parameters, in: store, success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``search(_:in:success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public static func search(
        _ term: String, in store: ResourceStore = .default, success: @escaping @Sendable ([Self]) -> Void,
        failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<[Self]> {
        search(term, in: store, success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``create(success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public func create(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<Self> {
        create(success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``save(success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public func save(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<Self> {
        save(success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``fetch(success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public func fetch(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<Self> {
        fetch(success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    /// ``delete(success:failure:)`` calling back with an ``/MonoRailClient/ActiveNetworkError``.
    @_disfavoredOverload @discardableResult
    public func delete(
        success: @escaping @Sendable (Self) -> Void, failure: @escaping @Sendable (ActiveNetworkError) -> Void
    ) -> RequestHandle<Self> {
        delete(success: success, failure: { failure(ActiveNetworkError($0)) })
    }

    private static func callback<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Value, in store: ResourceStore,
        success: @escaping @Sendable (Value) -> Void, failure: @escaping @Sendable (APIError) -> Void
    ) -> RequestHandle<Value> {
        let handle = RequestHandle(operation: operation)
        let announcer = store.announcer
        handle.whenComplete { result in
            // After the observers of what the action changed, when they are told on the main actor.
            announcer.announce {
                switch result {
                case .success(let value): success(value)
                case .failure(let error): failure(error)
                }
            }
        }
        return handle
    }
}
