public import Foundation
public import HTTPTypes

/// Turns response bodies into values: checks the content type, parses, unwraps the envelope
/// (namespace path, then root key) and decodes, wrapping every failure in one ``APIError``.
///
/// ``APIClient`` uses one of these; it is public so the same path can be used on stored responses.
///
/// ```swift
/// let decoder = ResponseDecoder(coding: CodingOptions(), envelope: EnvelopeStyle(rootNamespace: "data"))
/// let trains = try decoder.decode([Train].self, from: body, roots: ["trains"]).value
/// ```
public struct ResponseDecoder: Sendable {
    /// Key mapping, date formats and coercion.
    public var coding: CodingOptions
    /// Namespace and errors handling.
    public var envelope: EnvelopeStyle
    /// The JSON parser.
    public var parser: JSONParser
    /// The MessagePack reader, for `application/x-msgpack` responses.
    public var messagePackReader = MessagePackReader()

    /// The envelope rules ``envelope`` describes.
    public var locator: ResponseLocator { ResponseLocator(envelope) }

    /// Creates a response decoder.
    public init(
        coding: CodingOptions = CodingOptions(), envelope: EnvelopeStyle = EnvelopeStyle(),
        parser: JSONParser = JSONParser()
    ) {
        self.coding = coding
        self.envelope = envelope
        self.parser = parser
    }

    /// Parses a body by its content type: JSON, or MessagePack read into the same tree (so
    /// envelopes and models decode alike). A body without a content type is read as JSON.
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/decodingFailed``.
    public func parse(_ body: Data, response: HTTPResponse? = nil, request: HTTPRequest? = nil) throws -> JSONValue {
        if try isMessagePack(body, response: response, request: request) {
            do {
                return try messagePackReader.readJSON(body)
            } catch {
                throw APIError(
                    .decodingFailed, "the response is not valid MessagePack: \(error)",
                    request: request, response: response, rawBody: body, underlyingError: error)
            }
        }
        do {
            return try parser.parse(body)
        } catch {
            throw notJSON(error, body, response, request)
        }
    }

    /// Whether a body is MessagePack rather than JSON, by its content type.
    ///
    /// - Throws: ``APIError`` for any other content type, or an empty body.
    private func isMessagePack(_ body: Data, response: HTTPResponse?, request: HTTPRequest?) throws -> Bool {
        let contentType = response?.headerFields[.contentType]
        guard let format = WireFormat.ofResponse(contentType: contentType) else {
            throw APIError(
                .decodingFailed, "expected a JSON or MessagePack response, got \(contentType ?? "")",
                request: request, response: response, rawBody: body)
        }
        guard !body.isEmpty else {
            throw APIError(
                .decodingFailed, "the response body is empty", request: request, response: response, rawBody: body)
        }
        return format == .messagePack
    }

    private func notJSON(_ error: any Error, _ body: Data, _ response: HTTPResponse?, _ request: HTTPRequest?)
        -> APIError
    {
        APIError(
            .decodingFailed, "the response is not valid JSON: \(error)",
            request: request, response: response, rawBody: body, underlyingError: error)
    }

    /// Decodes `type` from a body.
    ///
    /// - Parameters:
    ///   - type: The type to decode; ``EmptyResponse`` accepts an empty body.
    ///   - body: The body bytes.
    ///   - response: The response head, for its content type and for errors.
    ///   - request: The request, for errors.
    ///   - roots: Root keys to unwrap, tried in order; when none is present the body is decoded bare.
    /// - Returns: The value and the side-loaded members.
    /// - Throws: ``APIError`` with code ``APIError/Code/decodingFailed``, or
    ///   ``APIError/Code/validationFailed`` for an `errors` member in place of the record.
    public func decode<T: Decodable>(
        _ type: T.Type,
        from body: Data,
        response: HTTPResponse? = nil,
        request: HTTPRequest? = nil,
        roots: [String] = []
    ) throws -> Envelope<T> {
        if T.self == EmptyResponse.self, let empty = EmptyResponse() as? T {
            return Envelope(value: empty, response: response)
        }
        if try !isMessagePack(body, response: response, request: request),
            let envelope = try decodeInPlace(type, from: body, response: response, request: request, roots: roots)
        {
            return envelope
        }
        let json = try parse(body, response: response, request: request)
        return try decode(type, from: json, rawBody: body, response: response, request: request, roots: roots)
    }

    /// Decodes a JSON body where it lies (``JSONTape``): only the members beside the main value
    /// become trees. The same values and errors as parsing the body and decoding the tree; `nil`
    /// for a body too large to tape.
    private func decodeInPlace<T: Decodable>(
        _ type: T.Type, from body: Data, response: HTTPResponse?, request: HTTPRequest?, roots: [String]
    ) throws -> Envelope<T>? {
        try body.withUnsafeBytes { raw throws -> Envelope<T>? in
            let tape: JSONTape
            do {
                guard let taped = try JSONTape(raw.bindMemory(to: UInt8.self), maxDepth: parser.maxDepth) else {
                    return nil
                }
                tape = taped
            } catch {
                throw notJSON(error, body, response, request)
            }
            defer { tape.close() }
            let whole = JSONTapeValue(tape: tape, index: 0)
            let located = try locate(
                in: whole, rawBody: body, response: response, request: request, locator: locator, roots: roots,
                shape: .any, requiresRoot: false, typeName: "\(T.self)")
            var sideloaded: [String: JSONValue] = [:]
            located.container?.forEachMember { key, value in
                if key != located.root { sideloaded[key] = value.tree }
            }
            let value = try decodeMain(
                T.self, path: located.path, root: located.root, rawBody: body, response: response, request: request,
                parsedBody: { whole.tree },
                decode: { decoder, path in try decoder.decode(T.self, from: tape, at: located.value.index, path: path) }
            )
            return Envelope(value: value, sideloaded: sideloaded, response: response)
        }
    }

    /// Parses a body and finds its main value in one step: the call a reader of records makes
    /// before it decodes them.
    ///
    /// - Parameters:
    ///   - body: The body bytes.
    ///   - response: The response head, for its content type and for errors.
    ///   - request: The request, for errors.
    ///   - locator: The envelope rules; by default this decoder's.
    ///   - roots: Keys the main value may sit under, tried in order.
    ///   - shape: What the main value must be.
    ///   - requiresRoot: Whether a body without any of `roots` is a failure rather than bare.
    ///   - typeName: The type being read, for error messages.
    /// - Returns: Where the main value sits and what came beside it.
    /// - Throws: ``APIError`` with code ``APIError/Code/decodingFailed`` or
    ///   ``APIError/Code/validationFailed``, carrying the request, the response and both bodies.
    public func locate(
        in body: Data, response: HTTPResponse? = nil, request: HTTPRequest? = nil, locator: ResponseLocator? = nil,
        roots: [String], shape: ResponseLocator.Shape = .any, requiresRoot: Bool = false, typeName: String = "value"
    ) throws -> LocatedValue {
        LocatedValue(
            try locate(
                in: try parse(body, response: response, request: request), rawBody: body, response: response,
                request: request, locator: locator ?? self.locator, roots: roots, shape: shape,
                requiresRoot: requiresRoot, typeName: typeName))
    }

    private func locate<Body: EnvelopeValue>(
        in body: Body, rawBody: Data?, response: HTTPResponse?, request: HTTPRequest?, locator: ResponseLocator,
        roots: [String], shape: ResponseLocator.Shape, requiresRoot: Bool, typeName: String
    ) throws -> (value: Body, path: String, container: Body?, root: String?) {
        do {
            return try locator.find(
                in: body, roots: roots, shape: shape, requiresRoot: requiresRoot, typeName: typeName)
        } catch var error as APIError {
            error.request = request
            error.response = response
            error.rawBody = rawBody
            error.parsedBody = body.tree
            throw error
        }
    }

    /// Decodes `type` from an already parsed body; see ``decode(_:from:response:request:roots:)-(_,Data,_,_,_)``.
    public func decode<T: Decodable>(
        _ type: T.Type,
        from json: JSONValue,
        rawBody: Data? = nil,
        response: HTTPResponse? = nil,
        request: HTTPRequest? = nil,
        roots: [String] = []
    ) throws -> Envelope<T> {
        let located = try locate(
            in: json, rawBody: rawBody, response: response, request: request, locator: locator, roots: roots,
            shape: .any, requiresRoot: false, typeName: "\(T.self)")
        let value = try decodeMain(
            T.self, path: located.path, root: located.root, rawBody: rawBody, response: response, request: request,
            parsedBody: { json },
            decode: { decoder, path in try decoder.decode(T.self, from: located.value, path: path) })
        var sideloaded: [String: JSONValue] = [:]
        if case .object(var members)? = located.container {
            if let root = located.root { members[root] = nil }
            sideloaded = members
        }
        return Envelope(value: value, sideloaded: sideloaded, response: response)
    }

    /// Runs `decode` on the main value found under `root`, turning its failures into ``APIError``s.
    private func decodeMain<T>(
        _ type: T.Type, path: String, root: String?, rawBody: Data?, response: HTTPResponse?, request: HTTPRequest?,
        parsedBody: () -> JSONValue, decode: (ValueDecoder, [WireKey]) throws -> T
    ) throws -> T {
        func failure(_ message: String, _ decodingFailure: DecodingFailure? = nil, _ underlying: (any Error)? = nil)
            -> APIError
        {
            APIError(
                .decodingFailed, message, request: request, response: response, rawBody: rawBody,
                parsedBody: parsedBody(), decodingFailure: decodingFailure, underlyingError: underlying)
        }
        let keys = (locator.namespaceKeys + (root.map { [$0] } ?? [])).map { WireKey(stringValue: $0) }
        do {
            return try decode(ValueDecoder(options: coding), keys)
        } catch let error as DecodingError {
            let detail = DecodingFailure(typeName: "\(T.self)", error: error)
            throw failure("the response cannot be decoded: \(detail)", detail, error)
        } catch let error as APIError {
            throw error
        } catch {
            throw failure("the response cannot be decoded as \(T.self): \(error)", nil, error)
        }
    }

    package static func isJSON(_ contentType: String) -> Bool {
        let prefix = "application/json".utf8
        if contentType.utf8.starts(with: prefix) {
            let rest = contentType.utf8.dropFirst(prefix.count)
            if rest.isEmpty || rest.first == UInt8(ascii: ";") || rest.first == UInt8(ascii: " ") { return true }
        }
        let mediaType = MediaType.essence(of: contentType)
        return mediaType == "application/json" || mediaType == "text/json" || mediaType.hasSuffix("+json")
    }
}

/// A response with no body worth decoding, such as `204 No Content`.
public struct EmptyResponse: Decodable, Sendable, Hashable {
    /// Creates an empty response.
    public init() {}
    /// Ignores whatever the body holds.
    public init(from decoder: any Decoder) throws {}
}
