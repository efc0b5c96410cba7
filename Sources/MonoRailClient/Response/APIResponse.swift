public import Foundation
public import HTTPTypes

/// A response as received: the head and the body bytes.
public struct APIResponse: Sendable {
    /// The request that was sent, after middleware.
    public var request: HTTPRequest
    /// The response head.
    public var response: HTTPResponse
    /// The body bytes.
    public var body: Data
    /// Decodes the body; set by the client that made the request.
    let decoder: ResponseDecoder
    /// Root keys to unwrap, from the request.
    let roots: [String]

    /// Creates a response.
    public init(
        request: HTTPRequest, response: HTTPResponse, body: Data, decoder: ResponseDecoder, roots: [String] = []
    ) {
        self.request = request
        self.response = response
        self.body = body
        self.decoder = decoder
        self.roots = roots
    }

    /// The status code.
    public var statusCode: Int { response.status.code }

    /// Whether the status is 2xx (ApiModel's `isSuccessful`).
    public var isSuccessful: Bool { response.status.kind == .successful }

    /// The body parsed as JSON.
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/decodingFailed`` for a body that is not JSON.
    public func json() throws -> JSONValue {
        try decoder.parse(body, response: response, request: request)
    }

    /// The body as an object, or `nil` (ApiModel's `response.dictionary`).
    public var dictionary: [String: JSONValue]? { (try? json())?.objectValue }

    /// The body as an array, or `nil` (ApiModel's `response.array`).
    public var array: [JSONValue]? { (try? json())?.arrayValue }

    /// The validation errors the body holds, or none (ApiModel's `response.errors`): an `errors`
    /// member at the top or under the response's root, at any status, and Django REST framework's
    /// bare `{field: [message]}` at 400 and 422.
    ///
    /// ```swift
    /// let response = try await api.send(
    ///     APIRequest(method: .post, path: "/posts", body: .json(post), options: .init(validatesStatus: false)))
    /// if !response.isSuccessful { print(response.errors.fullMessages) }
    /// ```
    public var errors: ValidationErrors {
        guard !body.isEmpty, let json = try? json() else { return ValidationErrors() }
        let bare = statusCode == 400 || statusCode == 422
        return ValidationErrors.parse(json, roots: roots, allowsBareFields: bare) ?? ValidationErrors()
    }

    /// Decodes the body into `type`, unwrapping the envelope.
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/decodingFailed`` or
    ///   ``APIError/Code/validationFailed`` (an `errors` body in a 2xx response).
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try envelope(type).value
    }

    /// Parses the body and finds its main value by `locator`'s rules; see
    /// ``ResponseDecoder/locate(in:response:request:locator:roots:shape:requiresRoot:typeName:)``.
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/decodingFailed`` or
    ///   ``APIError/Code/validationFailed``.
    public func locate(
        with locator: ResponseLocator, roots: [String], shape: ResponseLocator.Shape = .any,
        requiresRoot: Bool = false, typeName: String = "value"
    ) throws -> LocatedValue {
        try decoder.locate(
            in: body, response: response, request: request, locator: locator, roots: roots, shape: shape,
            requiresRoot: requiresRoot, typeName: typeName)
    }

    /// Decodes the body into `type` and keeps the records beside the main one.
    ///
    /// - Throws: As ``decode(_:)``.
    public func envelope<T: Decodable>(_ type: T.Type = T.self) throws -> Envelope<T> {
        try decoder.decode(type, from: body, response: response, request: request, roots: roots)
    }
}
