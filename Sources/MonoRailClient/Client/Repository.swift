import Foundation
public import HTTPTypes

/// A group of an API's endpoints, in the manner of Apic's repositories: each method is one endpoint,
/// and each call returns a ``RequestHandle`` that can be cancelled.
///
/// ```swift
/// struct GistsRepository: Repository {
///     let client: APIClient
///
///     func gists(of user: String) -> RequestHandle<[Gist]> {
///         request(.get, "/users/\(user)/gists")
///     }
/// }
///
/// let handle = repository.gists(of: "octocat")
/// handle.cancel()                       // stops the request
/// let gists = try await handle.value    // or wait for it
/// ```
public protocol Repository: Sendable {
    /// The client the endpoints are called on.
    var client: APIClient { get }
}

extension Repository {
    /// Starts a request and returns a handle to its decoded result.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The path; interpolated values are percent-encoded.
    ///   - parameters: Query parameters.
    ///   - body: A body to encode, if any.
    ///   - root: The root key to wrap the body in and unwrap the response from.
    ///   - type: The type to decode.
    /// - Returns: A handle that can be awaited or cancelled.
    public func request<T: Decodable & Sendable>(
        _ method: HTTPRequest.Method,
        _ path: APIPath,
        parameters: [String: JSONValue] = [:],
        body: (any Encodable & Sendable)? = nil,
        root: String? = nil,
        as type: T.Type = T.self
    ) -> RequestHandle<T> {
        let client = self.client
        let request = APIRequest(
            method: method, path: path, query: parameters, body: body.map { .encodable($0) }, bodyRoot: root,
            responseRoots: root.map { [$0] } ?? [])
        return RequestHandle { try await client.send(request).decode(type) }
    }

    /// Starts a request and calls `completion` with its result (Apic's completion style).
    ///
    /// The completion is not called when the handle is cancelled first.
    ///
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func request<T: Decodable & Sendable>(
        _ method: HTTPRequest.Method,
        _ path: APIPath,
        parameters: [String: JSONValue] = [:],
        body: (any Encodable & Sendable)? = nil,
        root: String? = nil,
        as type: T.Type = T.self,
        completion: @escaping @Sendable (Result<T, APIError>) -> Void
    ) -> RequestHandle<T> {
        let handle: RequestHandle<T> = request(method, path, parameters: parameters, body: body, root: root, as: type)
        handle.whenComplete(completion)
        return handle
    }
}

/// A request in flight that can be awaited or cancelled.
public final class RequestHandle<Value: Sendable>: Sendable {
    private let task: Task<Value, any Error>

    /// Starts `operation` in a new task.
    public init(operation: @escaping @Sendable () async throws -> Value) {
        self.task = Task { try await operation() }
    }

    /// Stops the request; waiting callers get ``APIError/Code/cancelled``.
    public func cancel() {
        task.cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { task.isCancelled }

    /// The result, once the request finishes.
    ///
    /// - Throws: ``APIError``.
    public var value: Value {
        get async throws {
            do {
                return try await task.value
            } catch {
                throw APIError.wrapping(error, request: nil)
            }
        }
    }

    /// Calls `completion` with the result, unless the handle was cancelled.
    public func whenComplete(_ completion: @escaping @Sendable (Result<Value, APIError>) -> Void) {
        let task = self.task
        Task {
            let result: Result<Value, APIError>
            do {
                result = .success(try await task.value)
            } catch {
                result = .failure(APIError.wrapping(error, request: nil))
            }
            if !task.isCancelled { completion(result) }
        }
    }
}
