import Foundation
import HTTPTypes

extension APIClient {
    /// `GET`s a path and decodes the response.
    ///
    /// ```swift
    /// let trains: [Train] = try await api.get("/trains", parameters: ["company": "DB"], root: "trains")
    /// ```
    ///
    /// - Parameters:
    ///   - path: The path; interpolated values are percent-encoded.
    ///   - parameters: Query parameters, Rails-nested.
    ///   - type: The type to decode.
    ///   - root: The root key to unwrap (`"train"`, `"trains"`); `nil` decodes the body bare.
    ///   - options: Per-call settings.
    /// - Returns: The decoded value.
    /// - Throws: ``APIError``.
    public func get<T: Decodable>(
        _ path: APIPath,
        parameters: [String: JSONValue] = [:],
        as type: T.Type = T.self,
        root: String? = nil,
        options: RequestOptions = RequestOptions()
    ) async throws -> T {
        try await send(
            APIRequest(
                method: .get, path: path, query: parameters, responseRoots: root.map { [$0] } ?? [], options: options)
        ).decode(type)
    }

    /// `POST`s a body and decodes the response.
    ///
    /// ```swift
    /// let created: Train = try await api.post("/trains", body: newTrain, root: "train")  // {"train": {…}}
    /// ```
    ///
    /// - Parameters:
    ///   - path: The path.
    ///   - body: The value to send, encoded with the client's coding options.
    ///   - root: Wraps the body in this key and unwraps the response from it; `nil` for bare bodies.
    ///   - type: The type to decode; ``EmptyResponse`` to ignore the body.
    ///   - options: Per-call settings.
    /// - Returns: The decoded value.
    /// - Throws: ``APIError``; a 422 gives ``APIError/Code/validationFailed``.
    @discardableResult
    public func post<T: Decodable>(
        _ path: APIPath,
        body: some Encodable & Sendable,
        root: String? = nil,
        as type: T.Type = T.self,
        options: RequestOptions = RequestOptions()
    ) async throws -> T {
        try await sendBody(.post, path, body, root, options).decode(type)
    }

    /// `PUT`s a body and decodes the response; see ``post(_:body:root:as:options:)``.
    @discardableResult
    public func put<T: Decodable>(
        _ path: APIPath,
        body: some Encodable & Sendable,
        root: String? = nil,
        as type: T.Type = T.self,
        options: RequestOptions = RequestOptions()
    ) async throws -> T {
        try await sendBody(.put, path, body, root, options).decode(type)
    }

    /// `PATCH`es a body and decodes the response; see ``post(_:body:root:as:options:)``.
    @discardableResult
    public func patch<T: Decodable>(
        _ path: APIPath,
        body: some Encodable & Sendable,
        root: String? = nil,
        as type: T.Type = T.self,
        options: RequestOptions = RequestOptions()
    ) async throws -> T {
        try await sendBody(.patch, path, body, root, options).decode(type)
    }

    /// `DELETE`s a path.
    ///
    /// - Returns: The raw response, for callers that want its body.
    /// - Throws: ``APIError``.
    @discardableResult
    public func delete(
        _ path: APIPath,
        parameters: [String: JSONValue] = [:],
        options: RequestOptions = RequestOptions()
    ) async throws -> APIResponse {
        try await send(APIRequest(method: .delete, path: path, query: parameters, options: options))
    }

    private func sendBody(
        _ method: HTTPRequest.Method,
        _ path: APIPath,
        _ body: some Encodable & Sendable,
        _ root: String?,
        _ options: RequestOptions
    ) async throws -> APIResponse {
        try await send(
            APIRequest(
                method: method, path: path, body: .encodable(body), bodyRoot: root,
                responseRoots: root.map { [$0] } ?? [], options: options))
    }
}
