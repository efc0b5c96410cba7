/// Why bytes are not valid MessagePack, or cannot become the value asked for, and where.
///
/// Every failure of ``MessagePackReader`` and ``MessagePackDecoder`` on outside data is one of
/// these: truncated input, lengths claiming more than the body holds, nesting beyond the limit,
/// invalid UTF-8 and unknown extension types are all reported, never trapped.
public struct MessagePackError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Hashable {
        /// The input ends before the value does, or a length claims more bytes than remain.
        case truncated
        /// The reserved byte `0xc1`.
        case invalidByte
        /// A string that is not valid UTF-8.
        case invalidUTF8
        /// Arrays and maps nested deeper than the reader's limit.
        case tooDeep
        /// A timestamp extension whose size or nanoseconds are invalid.
        case invalidTimestamp
        /// An extension type the destination cannot represent.
        case unsupportedExtension
        /// A map key the destination cannot represent (only strings and integers become JSON keys).
        case unsupportedKey
        /// Bytes after the first complete value.
        case trailingBytes
    }

    /// The kind of failure.
    public var code: Code
    /// The byte offset where the failure was found.
    public var offset: Int
    /// A human-readable explanation.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, offset: Int, reason: String) {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    /// The reason with the offset.
    public var description: String { "invalid MessagePack at byte \(offset): \(reason)" }
}
