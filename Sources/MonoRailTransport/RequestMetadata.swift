public import Foundation

/// How far an upload or download has come.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes transferred so far.
    public var completedBytes: Int64
    /// The total number of bytes, when the transport knows it.
    public var totalBytes: Int64?

    /// Creates a progress value.
    public init(completedBytes: Int64, totalBytes: Int64?) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// The completed fraction between 0 and 1, or `nil` when the total is unknown.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }
}

/// Typed context that travels with a request through middleware down to the transport.
///
/// Middleware may read and change it; transports honour ``timeout``, ``maxResponseBodySize`` and
/// the progress handlers.
public struct RequestMetadata: Sendable {
    /// A name for the operation, such as `"Train.get"`, used in logs.
    public var operationName: String?
    /// The route the path was made from, with its variable parts in braces (`/trains/{id}`), as
    /// OpenTelemetry's `url.template`: what names the request's span. `nil` when unknown.
    public var urlTemplate: String?
    /// The longest the whole exchange may take, or `nil` for the transport's default.
    public var timeout: Duration?
    /// The largest response body the transport collects before failing with
    /// ``TransportError/Code/responseTooLarge``.
    public var maxResponseBodySize: Int
    /// The attempt number, starting at 1; retries increase it.
    public var attempt: Int
    /// Called as the request body is sent.
    public var uploadProgress: (@Sendable (TransferProgress) -> Void)?
    /// Called as the response body arrives.
    public var downloadProgress: (@Sendable (TransferProgress) -> Void)?
    /// When set, a successful (2xx) response body is written to this file as it arrives (created or
    /// truncated) instead of being collected, ``maxResponseBodySize`` does not apply, and the body
    /// returned is empty. Other statuses are collected as usual, for their error bodies.
    public var responseBodyFile: URL?

    /// The default limit for collected response bodies: 64 MiB.
    public static let defaultMaxResponseBodySize = 64 * 1024 * 1024

    /// Creates metadata.
    public init(
        operationName: String? = nil,
        urlTemplate: String? = nil,
        timeout: Duration? = nil,
        maxResponseBodySize: Int = RequestMetadata.defaultMaxResponseBodySize,
        attempt: Int = 1,
        uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        responseBodyFile: URL? = nil
    ) {
        self.operationName = operationName
        self.urlTemplate = urlTemplate
        self.timeout = timeout
        self.maxResponseBodySize = maxResponseBodySize
        self.attempt = attempt
        self.uploadProgress = uploadProgress
        self.downloadProgress = downloadProgress
        self.responseBodyFile = responseBodyFile
    }
}
