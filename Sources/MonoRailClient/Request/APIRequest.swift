public import HTTPTypes
public import MonoRailTransport

/// Everything an ``APIClient`` needs to make one call: method, path, query, headers, body and how to
/// unwrap the response.
///
/// The verb methods (``APIClient/get(_:parameters:as:root:options:)`` and friends) build these for you;
/// build one yourself for full control:
///
/// ```swift
/// var request = APIRequest(method: .post, path: "/trains", body: .encodable(newTrain), bodyRoot: "train")
/// request.responseRoots = ["train"]
/// let train = try await client.send(request).decode(Train.self)
/// ```
public struct APIRequest: Sendable {
    /// What a request sends as its body.
    public enum Body: Sendable {
        /// A value encoded in the client's format (JSON by default); one holding a ``FileUpload``
        /// goes out as `multipart/form-data`.
        case encodable(any Encodable & Sendable)
        /// A tree, written in the client's format.
        case json(JSONValue)
        /// A tree with the files its placeholders stand for, as MonoRail's encoder produced them;
        /// sent as `multipart/form-data` when there are files.
        case tree(JSONValue, files: FileAttachments)
        /// A form built by hand.
        case multipart(MultipartFormData)
        /// Bytes or a file, sent as they are with the given content type.
        case raw(RequestBody, contentType: String)
    }

    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// The path relative to the base URL, or an absolute URL.
    public var path: APIPath
    /// Query parameters, Rails-nested.
    public var query: [String: JSONValue]
    /// Extra header fields for this call.
    public var headers: HTTPFields
    /// The body, if any.
    public var body: Body?
    /// Wraps an encoded body in this root key: `{"train": {…}}`.
    public var bodyRoot: String?
    /// Root keys to unwrap from the response, tried in order (`["train"]`, `["trains"]`).
    public var responseRoots: [String]
    /// Per-call settings.
    public var options: RequestOptions

    /// Creates a request.
    public init(
        method: HTTPRequest.Method,
        path: APIPath,
        query: [String: JSONValue] = [:],
        headers: HTTPFields = HTTPFields(),
        body: Body? = nil,
        bodyRoot: String? = nil,
        responseRoots: [String] = [],
        options: RequestOptions = RequestOptions()
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.bodyRoot = bodyRoot
        self.responseRoots = responseRoots
        self.options = options
    }
}
