/// A failure as MonoRail's first README shows it: `domain`, `code` and `data`.
///
/// ```swift
/// Train.get(id: 1, success: { (train: Train) in
///     print(train.company ?? "")
/// }, failure: { (error: ActiveNetworkError) in
///     print(error.domain, error.code)   // "Not Found" 404
///     print(error.data ?? [:])          // {"error": "not found"}
/// })
/// ```
///
/// It reads an ``APIError``, kept as ``error`` for everything else it knows: the request, the raw
/// body, validation messages, where decoding failed.
public struct ActiveNetworkError: Error, Sendable, CustomStringConvertible {
    /// The status's reason phrase, such as `"Not Found"`; for a failure with no response, the
    /// ``APIError/code``'s name, such as `"cannotConnect"`.
    public var domain: String
    /// The response's status code, such as `404`; `0` when no response arrived.
    public var code: Int
    /// The error response's body, parsed, when it is JSON or MessagePack.
    public var data: JSONValue?
    /// The failure in full.
    public var error: APIError

    /// Reads `error` as the seed showed it.
    public init(_ error: APIError) {
        self.domain = error.domain ?? error.code.description
        self.code = error.statusCode ?? 0
        self.data = error.parsedBody
        self.error = error
    }

    /// The ``APIError``'s description.
    public var description: String { error.description }
}
