public import Foundation
public import HTTPTypes

/// Every failure of an ``APIClient`` call, with the evidence needed to understand it.
///
/// A non-2xx response carries its status code, the reason phrase (``domain``), the raw body and the
/// parsed body (the seed's `ActiveNetworkError`). A 422 carries ``errors``. A decoding failure names
/// the type, the key and the JSON path (``decodingFailure``). Transport failures carry the
/// `TransportError` as ``underlyingError``.
///
/// ```swift
/// do {
///     let train: Train = try await client.get("/trains/\(id)", root: "train")
/// } catch let error as APIError {
///     switch error.code {
///     case .httpStatus where error.statusCode == 404: print("gone")
///     case .unauthorized: showSignIn()
///     case .validationFailed: print(error.errors.fullMessages)
///     case .timedOut, .cannotConnect: print("offline?")
///     default: print(error.message)
///     }
/// }
/// ```
public struct APIError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is. New codes may be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case httpStatus, unauthorized, forbidden, validationFailed, decodingFailed, encodingFailed
            case timedOut, cannotConnect, cancelled, connectionClosed, responseTooLarge, invalidRequest, invalidResponse
            case transport
            case inconsistentResponse, notPersisted, notCached, dependencyRejected, tooManyPages, invalidConfiguration
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The code whose ``description`` is `name`, for errors kept in storage.
        package init?(name: String) {
            guard let value = Value(rawValue: name) else { return nil }
            self.value = value
        }

        /// The server answered with a status that is not a success, and not one of those below.
        public static let httpStatus = Code(.httpStatus)
        /// The server answered `401 Unauthorized`: no credentials, or credentials it no longer
        /// takes — after the configured ``Authentication`` refreshed its token and tried again, or
        /// could not refresh it. The server's reason, when it gave one, ends the ``APIError/message``.
        public static let unauthorized = Code(.unauthorized)
        /// The server answered `403 Forbidden`: it knows who asks and refuses them this.
        public static let forbidden = Code(.forbidden)
        /// The server rejected the record; see ``APIError/errors``.
        public static let validationFailed = Code(.validationFailed)
        /// The response could not be read as the requested type; see ``APIError/decodingFailure``.
        public static let decodingFailed = Code(.decodingFailed)
        /// The request body could not be encoded.
        public static let encodingFailed = Code(.encodingFailed)
        /// The request took longer than its timeout.
        public static let timedOut = Code(.timedOut)
        /// No connection could be made.
        public static let cannotConnect = Code(.cannotConnect)
        /// The calling task or the request handle was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The connection closed before the response was complete.
        public static let connectionClosed = Code(.connectionClosed)
        /// The response body exceeded the configured limit.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The request could not be built (for example an unusable URL).
        public static let invalidRequest = Code(.invalidRequest)
        /// The server sent something that is not a usable HTTP response, such as a status below 100.
        public static let invalidResponse = Code(.invalidResponse)
        /// Any other transport failure.
        public static let transport = Code(.transport)
        /// The response contradicts the request, itself or what the store heard since the request was
        /// sent: a record with another id than the one asked for, one id twice in a list, an id whose
        /// type changed, or a record the store heard was deleted after the request was sent. Nothing
        /// was merged.
        public static let inconsistentResponse = Code(.inconsistentResponse)
        /// The action needs a record that exists on the server, and this one has no id yet.
        public static let notPersisted = Code(.notPersisted)
        /// A read that may only be answered from the record cache (`CachePolicy.cacheOnly`) found no
        /// answer there, or one past its time to live.
        public static let notCached = Code(.notCached)
        /// A write kept in the outbox was not sent because the server refused one it depends on: an
        /// earlier write to the same record, or the create of a record it refers to.
        public static let dependencyRejected = Code(.dependencyRejected)
        /// A read of every page of a list reached its page limit before the list's end.
        public static let tooManyPages = Code(.tooManyPages)
        /// The configuration asks for what it cannot do, such as queued writes kept durably by a
        /// storage that keeps none.
        public static let invalidConfiguration = Code(.invalidConfiguration)

        /// The code's name.
        public var description: String { value.rawValue }

        /// Lets `catch APIError.Code.timedOut` match an error with that code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? APIError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for people.
    public var message: String
    /// The request, when one was built.
    public var request: HTTPRequest?
    /// The response head, when one arrived.
    public var response: HTTPResponse?
    /// The response body as received.
    public var rawBody: Data?
    /// The response body parsed as JSON, when it is JSON.
    public var parsedBody: JSONValue?
    /// Validation messages, for ``Code/validationFailed``.
    public var validationErrors: ValidationErrors?
    /// Where decoding failed, for ``Code/decodingFailed``.
    public var decodingFailure: DecodingFailure?
    /// The error this one wraps.
    public var underlyingError: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        request: HTTPRequest? = nil,
        response: HTTPResponse? = nil,
        rawBody: Data? = nil,
        parsedBody: JSONValue? = nil,
        validationErrors: ValidationErrors? = nil,
        decodingFailure: DecodingFailure? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.request = request
        self.response = response
        self.rawBody = rawBody
        self.parsedBody = parsedBody
        self.validationErrors = validationErrors
        self.decodingFailure = decodingFailure
        self.underlyingError = underlyingError
    }

    /// A ``Code/decodingFailed`` error, its message the failure's description.
    package init(decodingFailure detail: DecodingFailure, underlyingError: (any Error)? = nil) {
        self.init(.decodingFailed, detail.description, decodingFailure: detail, underlyingError: underlyingError)
    }

    /// The HTTP status code, when a response arrived (the seed's `code`).
    public var statusCode: Int? { response?.status.code }

    /// The status's reason phrase, such as `"Not Found"` (the seed's `domain`).
    public var domain: String? {
        response?.status.reasonPhraseOrStandard
    }

    /// The parsed error body (the seed's `data`).
    public var data: JSONValue? { parsedBody }

    /// Validation messages; empty unless the code is ``Code/validationFailed``.
    public var errors: ValidationErrors { validationErrors ?? ValidationErrors() }

    /// Whether the request got no answer at all: it could not connect, timed out, or lost its
    /// connection before the response was whole.
    public var isUnanswered: Bool {
        response == nil && [.cannotConnect, .timedOut, .connectionClosed].contains(code)
    }

    /// Whether retrying later might succeed: timeouts, lost connections and 408/429/5xx statuses.
    public var isTransient: Bool {
        switch code {
        case .timedOut, .cannotConnect, .connectionClosed: return true
        case .httpStatus: return statusCode.map { $0 == 408 || $0 == 429 || $0 >= 500 } ?? false
        default: return false
        }
    }

    /// The code and the message.
    public var description: String { "\(code): \(message)" }

    /// Everything known about the failure, over several lines.
    public var debugDescription: String {
        var lines = ["APIError.\(code): \(message)"]
        if let request {
            lines.append("  request: \(request.method) \(request.url?.absoluteString ?? request.path ?? "")")
        }
        if let response { lines.append("  response: \(response.status.code) \(domain ?? "")") }
        if let decodingFailure { lines.append("  decoding: \(decodingFailure)") }
        if let validationErrors {
            lines.append("  validation: \(validationErrors.fullMessages.joined(separator: "; "))")
        }
        if let rawBody, !rawBody.isEmpty {
            lines.append("  body: \(String(decoding: rawBody.prefix(500), as: UTF8.self))")
        }
        if let underlyingError { lines.append("  underlying: \(String(reflecting: underlyingError))") }
        return lines.joined(separator: "\n")
    }
}

extension APIError {
    /// The error for a body holding validation messages, wherever it was found.
    package static func validationFailed(
        _ errors: ValidationErrors, request: HTTPRequest?, response: HTTPResponse?, rawBody: Data?,
        parsedBody: JSONValue?
    ) -> APIError {
        APIError(
            .validationFailed, "the server rejected the request: \(errors.fullMessages.joined(separator: ", "))",
            request: request, response: response, rawBody: rawBody, parsedBody: parsedBody, validationErrors: errors)
    }

    /// Wraps any error exactly once: an ``APIError`` passes through, a ``TransportError`` or
    /// cancellation becomes the matching code.
    package static func wrapping(_ error: any Error, request: HTTPRequest?) -> APIError {
        switch error {
        case var error as APIError:
            if error.request == nil { error.request = request }
            return error
        case let error as TransportError:
            let code: Code =
                switch error.code {
                case .timedOut: .timedOut
                case .cannotConnect: .cannotConnect
                case .cancelled: .cancelled
                case .connectionClosed: .connectionClosed
                case .responseTooLarge: .responseTooLarge
                case .invalidRequest: .invalidRequest
                case .invalidResponse: .invalidResponse
                default: .transport
                }
            return APIError(code, error.message, request: request, underlyingError: error)
        case is CancellationError:
            return APIError(.cancelled, "the request was cancelled", request: request, underlyingError: error)
        case let error as EncodingError:
            return APIError(
                .encodingFailed, "the request body cannot be encoded: \(error)", request: request,
                underlyingError: error)
        default:
            return APIError(.transport, String(describing: error), request: request, underlyingError: error)
        }
    }
}
