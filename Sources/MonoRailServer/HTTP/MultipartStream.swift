/// Reads a `multipart/form-data` body (RFC 7578, RFC 2046 §5.1) a chunk at a time, with nothing held
/// but the current header line and the bytes that may begin a delimiter.
///
/// It replaces multipart-kit 4.7.1, whose parser indexes a 128-entry table with any byte of a header
/// name: one byte above 0x7F there ended the server.
struct MultipartStream {
    /// What the body holds, in order.
    enum Event {
        /// A header of the current part.
        case header(name: String, value: String)
        /// Some bytes of the current part's body.
        case body(ArraySlice<UInt8>)
        /// The current part ended.
        case partComplete
    }

    /// Why a body is not multipart.
    struct SyntaxError: Error, CustomStringConvertible {
        var description: String
    }

    private enum State { case preamble, delimiterLine, headers, body, epilogue }

    /// The longest header line read, and the most headers a part may have.
    static let maxHeaderLine = 8 * 1024
    static let maxHeaders = 64

    /// `CRLF--boundary`: what ends a part. The body's first delimiter has no CRLF before it.
    private let delimiter: [UInt8]
    /// For each prefix of the delimiter, the length of its longest proper prefix that is also a suffix
    /// (Knuth–Morris–Pratt), so a near-miss such as `--bb` for `--b` is found in one pass.
    private let fallback: [Int]
    private var state = State.preamble
    /// How many bytes of the delimiter the bytes just read match; these are held back from the body.
    private var matched = 2
    private var line: [UInt8] = []
    private var headers = 0

    /// Whether the closing delimiter has been read.
    var isFinished: Bool { state == .epilogue }

    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        var fallback = [Int](repeating: 0, count: delimiter.count)
        var length = 0
        for index in delimiter.indices.dropFirst() {
            while length > 0 && delimiter[index] != delimiter[length] { length = fallback[length - 1] }
            if delimiter[index] == delimiter[length] { length += 1 }
            fallback[index] = length
        }
        self.fallback = fallback
    }

    /// Reads the next bytes, reporting what they complete.
    mutating func feed(_ bytes: some Collection<UInt8>, _ handle: (Event) throws -> Void) throws {
        var body: [UInt8] = []
        for byte in bytes {
            switch state {
            case .preamble, .body:
                try match(byte, into: &body, handle)
            case .delimiterLine:
                try readDelimiterLine(byte)
            case .headers:
                try readHeaderLine(byte, handle)
            case .epilogue:
                return
            }
        }
        if state == .body, !body.isEmpty { try handle(.body(body[...])) }
    }

    /// Matches `byte` against the delimiter; bytes that turn out not to begin one go to `body`.
    private mutating func match(_ byte: UInt8, into body: inout [UInt8], _ handle: (Event) throws -> Void) throws {
        while matched > 0 && delimiter[matched] != byte {
            let kept = fallback[matched - 1]
            if state == .body { body += delimiter[0..<(matched - kept)] }
            matched = kept
        }
        if delimiter[matched] == byte {
            matched += 1
            guard matched == delimiter.count else { return }
            if state == .body {
                if !body.isEmpty { try handle(.body(body[...])) }
                body.removeAll(keepingCapacity: true)
                try handle(.partComplete)
            }
            state = .delimiterLine
            matched = 0
            line.removeAll(keepingCapacity: true)
        } else if state == .body {
            body.append(byte)
        }
    }

    /// After a delimiter: `--` closes the body; otherwise only padding may precede the CRLF.
    private mutating func readDelimiterLine(_ byte: UInt8) throws {
        line.append(byte)
        if line.count == 2, line == [UInt8(ascii: "-"), UInt8(ascii: "-")] {
            state = .epilogue
            return
        }
        guard line.count <= Self.maxHeaderLine else { throw SyntaxError(description: "a delimiter line is too long") }
        guard line.count >= 2, line[line.count - 2] == 0x0D, byte == 0x0A else { return }
        guard line.dropLast(2).allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else {
            throw SyntaxError(description: "text after a delimiter")
        }
        state = .headers
        headers = 0
        line.removeAll(keepingCapacity: true)
    }

    /// A header line `name: value`, or the empty line that starts the part's body.
    private mutating func readHeaderLine(_ byte: UInt8, _ handle: (Event) throws -> Void) throws {
        line.append(byte)
        guard line.count <= Self.maxHeaderLine else { throw SyntaxError(description: "a header line is too long") }
        guard line.count >= 2, line[line.count - 2] == 0x0D, byte == 0x0A else { return }
        let content = line.dropLast(2)
        line.removeAll(keepingCapacity: true)
        if content.isEmpty {
            state = .body
            matched = 0
            return
        }
        headers += 1
        guard headers <= Self.maxHeaders else { throw SyntaxError(description: "a part has too many headers") }
        guard let colon = content.firstIndex(of: UInt8(ascii: ":")), colon > content.startIndex,
            content[..<colon].allSatisfy(Self.isTokenCharacter)
        else {
            throw SyntaxError(description: "a header line is not `name: value`")
        }
        let value = content[content.index(after: colon)...].drop { $0 == 0x20 || $0 == 0x09 }
        let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        try handle(
            .header(
                name: String(decoding: content[..<colon], as: UTF8.self),
                value: String(decoding: trimmed, as: UTF8.self))
        )
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
