import Foundation
import HTTPTypes
import MonoRailTransport

extension APIClient {
    /// Sends a request and returns the response once its status is a success.
    ///
    /// The request passes through the middleware, the retry policy, the request log and request
    /// de-duplication, in that order, before reaching the transport.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, not yet decoded.
    /// A `304 Not Modified` answering a request sent with `If-None-Match` or `If-Modified-Since` is
    /// returned, not thrown.
    ///
    /// - Throws: ``APIError``: ``APIError/Code/unauthorized`` for a 401, ``APIError/Code/forbidden``
    ///   for a 403, ``APIError/Code/httpStatus`` for another non-2xx status (each with the server's
    ///   reason in its message when the body gives one), ``APIError/Code/validationFailed`` for a 422
    ///   with validation messages, or a transport code.
    public func send(_ request: APIRequest) async throws -> APIResponse {
        var head: HTTPRequest?
        do {
            let (built, body) = try makeRequest(request)
            head = built
            let metadata = RequestMetadata(
                operationName: request.options.operationName,
                urlTemplate: request.options.urlTemplate,
                timeout: request.options.timeout ?? configuration.timeout,
                maxResponseBodySize: configuration.maxResponseBodySize,
                uploadProgress: request.options.uploadProgress,
                downloadProgress: request.options.downloadProgress,
                responseBodyFile: request.options.responseBodyFile)
            let (response, data) = try await chain(for: request.options)(built, body, metadata)
            let result = APIResponse(
                request: built, response: response, body: data, decoder: responseDecoder,
                roots: request.responseRoots)
            if request.options.validatesStatus { try validateStatus(of: result, for: request) }
            return result
        } catch {
            throw APIError.wrapping(error, request: head)
        }
    }

    /// Sends a request and decodes its body, keeping the side-loaded records.
    ///
    /// - Throws: ``APIError``, as ``send(_:)`` and ``ResponseDecoder/decode(_:from:response:request:roots:)-(_,Data,_,_,_)``.
    public func envelope<T: Decodable>(_ request: APIRequest, as type: T.Type = T.self) async throws -> Envelope<T> {
        try await send(request).envelope(type)
    }

    // MARK: - Building

    func makeRequest(_ request: APIRequest) throws -> (HTTPRequest, RequestBody?) {
        let (scheme, authority, path) = try components(for: request.path, query: request.query)
        var head = HTTPRequest(method: request.method, scheme: scheme, authority: authority, path: path)
        head.headerFields = request.headers
        let defaultHeaders = request.options.isAnonymous ? HTTPFields() : configuration.defaultHeaders
        for field in defaultHeaders where head.headerFields[field.name] == nil {
            head.headerFields.append(field)
        }
        let format = request.options.format ?? configuration.format
        if head.headerFields[.accept] == nil {
            head.headerFields[.accept] = format.accept
        }
        guard let body = request.body else { return (head, nil) }
        let (requestBody, contentType) = try encode(body, root: request.bodyRoot, format: format)
        if head.headerFields[.contentType] == nil {
            head.headerFields[.contentType] = contentType
        }
        return (head, requestBody)
    }

    func encode(_ body: APIRequest.Body, root: String?, format: WireFormat) throws -> (RequestBody, String) {
        let tree: JSONValue
        var files = FileAttachments()
        switch body {
        case .raw(let raw, let contentType):
            return (raw, contentType)
        case .multipart(let form):
            return (try form.body(), form.contentType)
        case .json(let value):
            tree = value
        case .tree(let value, let attachments):
            tree = value
            files = attachments
        case .encodable(let value):
            do {
                let context = EncodingContext(options: configuration.coding, userInfo: [:])
                tree = try context.box(value, path: nil)
                files = context.attachments
            } catch {
                throw APIError(.encodingFailed, "the request body cannot be encoded: \(error)", underlyingError: error)
            }
        }
        let wrapped: JSONValue = root.map { .object([$0: tree]) } ?? tree
        if !files.isEmpty || format == .multipart {
            let form = MultipartFormData(wrapped, attachments: files)
            return (try form.body(), form.contentType)
        }
        switch format {
        case .messagePack: return (.data(MessagePackWriter.serialize(wrapped)), "application/x-msgpack")
        case .formURLEncoded: return (.data(FormEncoder.data(wrapped)), "application/x-www-form-urlencoded")
        case .json, .multipart: return (.data(JSONWriter.serialize(wrapped)), "application/json")
        }
    }

    // MARK: - Status

    func validateStatus(of result: APIResponse, for request: APIRequest) throws {
        let status = result.response.status
        guard status.kind != .successful else { return }
        // 304 is the answer a conditional request asks for: the representation the client holds is current.
        if status == .notModified,
            result.request.headerFields[.ifNoneMatch] != nil || result.request.headerFields[.ifModifiedSince] != nil
        {
            return
        }
        let parsed =
            result.body.isEmpty ? nil : try? responseDecoder.parse(result.body, response: result.response)
        let reason = status.reasonPhraseOrStandard
        let validationStatuses = request.options.validationStatuses ?? configuration.validationStatuses
        // A 400 is validation errors too when its body says so with an `errors` member, at the top or
        // under the record's root (ApiModel); the bare `{field: [message]}` shape only at the
        // configured statuses, since many servers answer a 400 with `{"message": "…"}`.
        // JSON:API error objects that point at fields are validation errors whatever the status.
        if validationStatuses.contains(status.code) || status.code == 400
            || (status.kind == .clientError && parsed.map(ValidationErrors.pointsAtFields) == true),
            let parsed
        {
            let roots = request.responseRoots + (request.bodyRoot.map { [$0] } ?? [])
            if let errors = ValidationErrors.parse(
                parsed, roots: roots, allowsBareFields: validationStatuses.contains(status.code)),
                !errors.isEmpty
            {
                throw APIError.validationFailed(
                    errors, request: result.request, response: result.response, rawBody: result.body,
                    parsedBody: parsed)
            }
        }
        let code: APIError.Code =
            switch status.code {
            case 401: .unauthorized
            case 403: .forbidden
            default: .httpStatus
            }
        let told = parsed.flatMap(APIError.reason(in:)).map { ": \($0)" } ?? ""
        throw APIError(
            code, "the server answered \(status.code) \(reason)\(told)",
            request: result.request, response: result.response, rawBody: result.body, parsedBody: parsed)
    }

    // MARK: - Chain

    /// Middleware → authentication → retries → log → de-duplication → the attempt's span → transport.
    func chain(for options: RequestOptions) -> MiddlewareNext {
        let deduplicates = configuration.deduplicatesRequests && options.deduplicates
        guard options.retryPolicy != nil || options.isAnonymous else {
            return deduplicates ? defaultChains.deduplicating : defaultChains.direct
        }
        return Self.makeChain(
            configuration, transport: transport, telemetry: telemetry, coalescer: coalescer,
            deduplicates: deduplicates, retryPolicy: options.retryPolicy, anonymous: options.isAnonymous)
    }

    static func makeChain(
        _ configuration: Configuration,
        transport: any Transport,
        telemetry: Telemetry,
        coalescer: RequestCoalescer,
        deduplicates: Bool,
        retryPolicy: RetryPolicy?,
        anonymous: Bool = false,
        innermost: MiddlewareNext? = nil
    ) -> MiddlewareNext {
        var next: MiddlewareNext =
            innermost ?? { request, body, metadata in
                try await transport.send(request, body: body, metadata: metadata)
            }
        next = wrap(AttemptTracing(telemetry: telemetry, anonymous: anonymous), around: next)
        if deduplicates {
            let inner = next
            next = { request, body, metadata in
                guard request.method == .get || request.method == .head, body == nil else {
                    return try await inner(request, body, metadata)
                }
                return try await coalescer.run(key: RequestCoalescer.key(for: request)) {
                    try await inner(request, body, metadata)
                }
            }
        }
        next = wrap(LoggingMiddleware(logger: configuration.logger, level: configuration.requestLogLevel), around: next)
        next = retrying(retryPolicy ?? configuration.retryPolicy, clock: configuration.clock, next)
        if anonymous { return next }
        let origin = baseComponents(configuration.baseURL).map { ($0.scheme, $0.authority) }
        if let authentication = configuration.authentication {
            next = wrap(authentication.restricted(to: origin), around: next)
        }
        for middleware in configuration.middleware.reversed() {
            // Tokens go to the API's origin only, wherever the list has them.
            if let authentication = middleware as? Authentication {
                next = wrap(authentication.restricted(to: origin), around: next)
            } else {
                next = wrap(middleware, around: next)
            }
        }
        if let delegate = configuration.networkingDelegate {
            next = wrap(NetworkingDelegateMiddleware(delegate), around: next)
        }
        return next
    }

    static func wrap(_ middleware: any Middleware, around next: @escaping MiddlewareNext) -> MiddlewareNext {
        { request, body, metadata in
            try await middleware.intercept(request, body: body, metadata: metadata, next: next)
        }
    }

    static func retrying(
        _ policy: RetryPolicy,
        clock: any Clock<Duration>,
        _ next: @escaping MiddlewareNext
    ) -> MiddlewareNext {
        guard policy.maxAttempts > 1 else { return next }
        // Successful responses return without consulting the policy: touching its sets on every call
        // costs shared reference-count traffic between cores, which showed up under 32 concurrent calls.
        let retriesBelow400 = policy.retryableStatuses.contains { $0 < 400 }
        return { request, body, metadata in
            var generator = SystemRandomNumberGenerator()
            var attempt = 1
            while true {
                var attemptMetadata = metadata
                attemptMetadata.attempt = attempt
                let result: Result<(HTTPResponse, Data), any Error>
                let outcome: RetryPolicy.Outcome
                do {
                    let exchange = try await next(request, body, attemptMetadata)
                    if exchange.0.status.code < 400 && !retriesBelow400 { return exchange }
                    result = .success(exchange)
                    outcome = .response(exchange.0)
                } catch {
                    result = .failure(error)
                    outcome = .failure(error)
                }
                let decision = policy.decision(
                    for: outcome, attempt: attempt, method: request.method,
                    bodyIsReplayable: body?.isReplayable ?? true, using: &generator)
                guard case .retry(let delay) = decision, !Task.isCancelled else { return try result.get() }
                try await clock.sleep(for: delay)
                attempt += 1
            }
        }
    }
}
