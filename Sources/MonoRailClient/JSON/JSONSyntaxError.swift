/// Bytes that are not valid JSON (RFC 8259).
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset where parsing stopped.
    public var offset: Int
    /// What was wrong there.
    public var reason: String

    /// Creates an error.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// A sentence naming the offset and the reason.
    public var description: String { "malformed JSON at byte \(offset): \(reason)" }
}
