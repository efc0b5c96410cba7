import Dispatch
import MonoRailTransport

// Blocking variants for scripts and command-line tools, where there is no async context to await
// in. They block the calling thread on a semaphore while the request runs on the cooperative pool,
// so they are unavailable from async code, where blocking could starve the pool and deadlock.

/// The class actions of a model, blocking the calling thread until they finish.
///
/// ```swift
/// // main.swift of a command-line tool
/// let train = try Train.blocking.get(id: 1)
/// ```
public struct BlockingModelActions<Model: ResourceModel>: Sendable {
    let store: ResourceStore

    /// ``ResourceModel/get(id:include:parameters:policy:in:)``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async get(id:) from async code")
    public func get(id: some ResourceIDConvertible) throws -> Model {
        let id = id.resourceID
        let store = store
        return try waitFor { try await Model.get(id: id, in: store) }
    }

    /// ``ResourceModel/get(policy:in:)``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async get() from async code")
    public func get() throws -> [Model] {
        let store = store
        return try waitFor { try await Model.get(in: store) }
    }

    /// ``ResourceModel/get(where:include:policy:in:)``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async get(where:) from async code")
    public func get(where parameters: [String: JSONValue]) throws -> [Model] {
        let store = store
        return try waitFor { try await Model.get(where: parameters, in: store) }
    }

    /// ``ResourceModel/search(_:policy:in:)``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async search(_:) from async code")
    public func search(_ term: String) throws -> [Model] {
        let store = store
        return try waitFor { try await Model.search(term, in: store) }
    }
}

/// The instance actions of a model, blocking the calling thread until they finish.
public struct BlockingInstanceActions<Model: ResourceModel>: Sendable {
    let instance: Model

    /// ``ResourceModel/create(in:id:uploadProgress:)``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async create() from async code")
    public func create() throws {
        let instance = instance
        try waitFor { try await instance.create() }
    }

    /// ``ResourceModel/save(uploadProgress:)``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async save() from async code")
    public func save() throws {
        let instance = instance
        try waitFor { try await instance.save() }
    }

    /// ``ResourceModel/fetch()``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async fetch() from async code")
    public func fetch() throws {
        let instance = instance
        try waitFor { try await instance.fetch() }
    }

    /// ``ResourceModel/delete()``, blocking.
    ///
    /// - Throws: ``/MonoRailClient/APIError``.
    @available(*, noasync, message: "use the async delete() from async code")
    public func delete() throws {
        let instance = instance
        try waitFor { try await instance.delete() }
    }
}

extension ResourceModel {
    /// Blocking class actions on the default store, for scripts: `try Train.blocking.get(id: 1)`.
    public static var blocking: BlockingModelActions<Self> { BlockingModelActions(store: .default) }

    /// Blocking class actions on a store.
    public static func blocking(in store: ResourceStore) -> BlockingModelActions<Self> {
        BlockingModelActions(store: store)
    }

    /// Blocking instance actions, for scripts: `try train.blocking.save()`.
    public var blocking: BlockingInstanceActions<Self> { BlockingInstanceActions(instance: self) }
}

@discardableResult
private func waitFor<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
    let semaphore = DispatchSemaphore(value: 0)
    let outcome = Locked<Result<Value, any Error>?>(nil)
    Task {
        let result: Result<Value, any Error>
        do {
            result = .success(try await Announcer.$settles.withValue(false) { try await operation() })
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        semaphore.signal()
    }
    semaphore.wait()
    guard let result = outcome.withLock({ $0 }) else {
        throw APIError(.cancelled, "the blocking call ended without a result")
    }
    return try result.get()
}
