public import Foundation
public import MonoRailTransport

/// Per-call settings that override the client's configuration.
public struct RequestOptions: Sendable {
    /// Whether an identical GET already in flight may be shared. Default `true`.
    public var deduplicates: Bool
    /// A retry policy for this call only; `nil` uses the client's.
    public var retryPolicy: RetryPolicy?
    /// A timeout for this call only; `nil` uses the client's.
    public var timeout: Duration?
    /// A name for logs, such as `"Train.get"`.
    public var operationName: String?
    /// The route the path was made from, variable parts in braces (`/trains/{id}`): the request's
    /// span is named `GET /trains/{id}` and carries it as `url.template`. `nil` names the span by
    /// the method alone. Models set it from their routes.
    public var urlTemplate: String?
    /// Called as the request body is sent.
    public var uploadProgress: (@Sendable (TransferProgress) -> Void)?
    /// Called as the response body arrives.
    public var downloadProgress: (@Sendable (TransferProgress) -> Void)?
    /// The body format and the `Accept` asked for on this call; `nil` uses the client's.
    public var format: WireFormat?
    /// Streams a successful response body into this file instead of memory, with no size limit;
    /// the response's `body` is then empty. ``APIClient/download(_:to:resume:options:)`` uses it.
    public var responseBodyFile: URL?
    /// Statuses whose bodies are validation errors on this call; `nil` uses the client's.
    public var validationStatuses: Set<Int>?
    /// Whether a status other than 2xx throws. Default `true`; `false` returns every answer the
    /// server gives, to read its ``APIResponse/isSuccessful`` and ``APIResponse/errors`` (ApiModel's
    /// `Api.get(path) { response in … }`). Failures to reach the server still throw.
    public var validatesStatus: Bool
    /// Whether the request goes out without the app's credentials: none of the client's default
    /// headers, middleware or networking delegate, only retries, limits and the request log. For a
    /// URL another origin serves (an image on a CDN a record names), which must not see the app's
    /// tokens. Default `false`; MonoRail's `FileCache` sets it for a URL off the client's origin.
    public var isAnonymous: Bool

    /// Creates options.
    public init(
        deduplicates: Bool = true,
        retryPolicy: RetryPolicy? = nil,
        timeout: Duration? = nil,
        operationName: String? = nil,
        urlTemplate: String? = nil,
        uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        format: WireFormat? = nil,
        responseBodyFile: URL? = nil,
        validationStatuses: Set<Int>? = nil,
        validatesStatus: Bool = true,
        isAnonymous: Bool = false
    ) {
        self.deduplicates = deduplicates
        self.retryPolicy = retryPolicy
        self.timeout = timeout
        self.operationName = operationName
        self.urlTemplate = urlTemplate
        self.uploadProgress = uploadProgress
        self.downloadProgress = downloadProgress
        self.format = format
        self.responseBodyFile = responseBodyFile
        self.validationStatuses = validationStatuses
        self.validatesStatus = validatesStatus
        self.isAnonymous = isAnonymous
    }
}
