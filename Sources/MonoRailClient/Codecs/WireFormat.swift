/// How request bodies are written and which response format is asked for.
///
/// Responses are always read by their `Content-Type`, whatever was asked: a server that answers
/// JSON to a MessagePack client still works.
///
/// ```swift
/// let api = APIClient(configuration: .init(baseURL: url, format: .messagePack))
/// ```
public enum WireFormat: Sendable, Hashable {
    /// `application/json` (the default).
    case json
    /// `application/x-msgpack`, the format Objects speaks.
    case messagePack
    /// `application/x-www-form-urlencoded` with Rails bracket nesting (`train[tags][]=a`); responses
    /// are asked for as JSON.
    case formURLEncoded
    /// `multipart/form-data` with Rails bracket names, even without files. A body that holds a
    /// ``FileUpload`` is sent this way whatever the format; responses are asked for as JSON.
    case multipart

    /// The `Accept` header sent with every request.
    public var accept: String {
        switch self {
        case .messagePack: "application/x-msgpack, application/msgpack;q=0.9, application/json;q=0.5"
        case .json, .formURLEncoded, .multipart: "application/json"
        }
    }

    /// How a response body with this `Content-Type` is read: ``json`` (also when none is declared),
    /// ``messagePack``, or `nil` for any other type. JSON, the common case, is recognised first, by
    /// its prefix alone when it is written as most servers write it.
    package static func ofResponse(contentType: String?) -> WireFormat? {
        guard let contentType, !ResponseDecoder.isJSON(contentType) else { return .json }
        return isMessagePack(contentType) ? .messagePack : nil
    }

    /// Whether a `Content-Type` names MessagePack (`application/x-msgpack`, `application/msgpack`,
    /// `application/vnd.msgpack`).
    public static func isMessagePack(_ contentType: String) -> Bool {
        let mediaType = MediaType.essence(of: contentType)
        return mediaType == "application/x-msgpack" || mediaType == "application/msgpack"
            || mediaType == "application/vnd.msgpack"
    }
}
