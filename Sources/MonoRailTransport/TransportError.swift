/// A failure to complete an HTTP exchange: no complete response was read.
///
/// Match on the code:
///
/// ```swift
/// do { _ = try await transport.send(request, body: nil, metadata: .init()) }
/// catch let error as TransportError where error.code == .timedOut { … }
/// ```
public struct TransportError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is. New codes may be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case timedOut, cannotConnect, cancelled, connectionClosed, responseTooLarge, invalidRequest, invalidResponse
            case other
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The request took longer than its timeout.
        public static let timedOut = Code(.timedOut)
        /// No connection could be made to the server.
        public static let cannotConnect = Code(.cannotConnect)
        /// The calling task was cancelled, and the request stopped.
        public static let cancelled = Code(.cancelled)
        /// The server closed the connection before the response was complete.
        public static let connectionClosed = Code(.connectionClosed)
        /// The response body was larger than ``RequestMetadata/maxResponseBodySize``.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The request could not be sent as given (an unusable URL or body).
        public static let invalidRequest = Code(.invalidRequest)
        /// The server sent something that is not a usable HTTP response, such as a status below 100.
        /// Not retried by default: the same server is likely to answer the same way.
        public static let invalidResponse = Code(.invalidResponse)
        /// Any other transport failure; see ``TransportError/underlyingError``.
        public static let other = Code(.other)

        /// The code's name.
        public var description: String { value.rawValue }

        /// Lets `catch TransportError.Code.timedOut` match an error with that code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? TransportError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for people.
    public var message: String
    /// The error reported by the underlying HTTP library, if any.
    public var underlyingError: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    /// The code and the message.
    public var description: String { "\(code): \(message)" }

    /// The description and the underlying error.
    public var debugDescription: String {
        var text = "TransportError.\(code): \(message)"
        if let underlyingError { text += "\n  underlying: \(String(reflecting: underlyingError))" }
        return text
    }
}
