public import HTTPTypes

extension HTTPResponse.Status {
    /// The reason phrase the server sent, or the standard one for the code when it sent none:
    /// HTTP/2 has no reason phrases, and FoundationNetworking's URLSession passes none on.
    /// `HTTPResponse.Status(code:)` alone gives an empty phrase; an unregistered code has none.
    public var reasonPhraseOrStandard: String {
        guard reasonPhrase.isEmpty else { return reasonPhrase }
        return Self.standardPhrases[code] ?? ""
    }

    /// Every status swift-http-types names, by code.
    private static let standardPhrases: [Int: String] = Dictionary(
        ([
            .continue, .switchingProtocols, .earlyHints, .ok, .created, .accepted, .nonAuthoritativeInformation,
            .noContent, .resetContent, .partialContent, .multipleChoices, .movedPermanently, .found, .seeOther,
            .notModified, .temporaryRedirect, .permanentRedirect, .badRequest, .unauthorized, .forbidden, .notFound,
            .methodNotAllowed, .notAcceptable, .proxyAuthenticationRequired, .requestTimeout, .conflict, .gone,
            .lengthRequired, .preconditionFailed, .contentTooLarge, .uriTooLong, .unsupportedMediaType,
            .rangeNotSatisfiable, .expectationFailed, .misdirectedRequest, .unprocessableContent, .tooEarly,
            .upgradeRequired, .preconditionRequired, .tooManyRequests, .requestHeaderFieldsTooLarge,
            .unavailableForLegalReasons, .internalServerError, .notImplemented, .badGateway, .serviceUnavailable,
            .gatewayTimeout, .httpVersionNotSupported, .networkAuthenticationRequired,
        ] as [HTTPResponse.Status]).map { ($0.code, $0.reasonPhrase) }, uniquingKeysWith: { first, _ in first })
}
