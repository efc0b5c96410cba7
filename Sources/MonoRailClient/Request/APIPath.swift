/// A path relative to the client's base URL, in which interpolated values are percent-encoded.
///
/// Literal text is used as written; every interpolated value becomes exactly one path segment, so an
/// id can never change the path:
///
/// ```swift
/// let id = "../admin"
/// let path: APIPath = "/trains/\(id).json"   // "/trains/..%2Fadmin.json"
/// ```
///
/// A path may carry a query (`"/posts.json?page=2"`) or be an absolute URL, which is then used as is.
public struct APIPath: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The encoded path, ready to be appended to a base URL.
    public let encoded: String

    /// A path whose text is already encoded; nothing is escaped.
    public init(verbatim encoded: String) {
        self.encoded = encoded
    }

    /// Builds a path from segments, percent-encoding each one.
    ///
    /// ```swift
    /// APIPath(segments: ["trains", 42])  // "/trains/42"
    /// ```
    public init(segments: [any CustomStringConvertible]) {
        self.encoded = "/" + segments.map { APIPath.encodeSegment($0.description) }.joined(separator: "/")
    }

    /// A literal path.
    public init(stringLiteral value: String) {
        self.encoded = value
    }

    /// A path built by interpolation.
    public init(stringInterpolation: StringInterpolation) {
        self.encoded = stringInterpolation.text
    }

    /// The encoded path.
    public var description: String { encoded }

    /// Collects literal text as is and interpolated values percent-encoded.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        /// Reserves room for the result.
        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 8)
        }

        /// Appends literal text unchanged.
        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Appends a value as one percent-encoded path segment.
        public mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            text += APIPath.encodeSegment(value.description)
        }

        /// Appends already-encoded text unchanged.
        public mutating func appendInterpolation(verbatim value: String) {
            text += value
        }
    }

    /// Percent-encodes one path segment: everything but RFC 3986's unreserved characters, and the
    /// dots of a `.` or `..` segment, which servers would otherwise resolve.
    public static func encodeSegment(_ segment: String) -> String {
        if !segment.isEmpty, segment.allSatisfy({ $0 == "." }) {
            return String(repeating: "%2E", count: segment.count)
        }
        return percentEncode(segment)
    }

    static func percentEncode(_ string: String) -> String {
        if string.utf8.allSatisfy(isUnreserved) { return string }
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count * 3)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @inline(__always) private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
