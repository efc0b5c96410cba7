/// A position in a JSON text, read where it lies: the one place the grammar's scalars — literals,
/// strings with their escapes and UTF-8, numbers — are read and checked. ``JSONParser`` builds
/// trees on it; ``skipValue(depth:)`` checks a value exactly as the parser would, building nothing,
/// so a reader that decodes records in place accepts and rejects the same texts.
package struct JSONCursor {
    package let bytes: UnsafeBufferPointer<UInt8>
    /// The deepest nesting of arrays and objects accepted.
    package let maxDepth: Int
    package var offset: Int

    package init(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int = 0, maxDepth: Int) {
        self.bytes = bytes
        self.offset = offset
        self.maxDepth = maxDepth
    }

    package var isAtEnd: Bool { offset == bytes.count }

    package func error(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset, reason: reason)
    }

    @inline(__always) package var current: UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    @inline(__always) package mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// After a member or an element: moves past a comma and the whitespace after it (`true`:
    /// another follows) or past the bracket that closes the container (`false`); `nil`, moving
    /// nothing, when neither is there.
    @inline(__always) package mutating func continues(closing bracket: UInt8) -> Bool? {
        switch current {
        case UInt8(ascii: ","):
            offset += 1
            skipWhitespace()
            return true
        case bracket:
            offset += 1
            return false
        default:
            return nil
        }
    }

    // MARK: - Checking without building

    /// Checks the value at the cursor exactly as ``JSONParser`` would parse it, and moves past it,
    /// building nothing. `depth` is the nesting of the arrays and objects around it.
    package mutating func skipValue(depth: Int) throws(JSONSyntaxError) {
        var nothing = UnrecordedStructure()
        try walkValue(depth: depth, into: &nothing)
    }

    /// Checks the value at the cursor exactly as ``JSONParser`` would parse it, moves past it, and
    /// tells `structure` where its containers, keys and scalars lie. The one walk of the grammar's
    /// arrays and objects besides the parser's: ``skipValue(depth:)`` records nothing,
    /// ``JSONTape`` records everything.
    package mutating func walkValue<Structure: JSONStructure>(
        depth: Int, into structure: inout Structure
    ) throws(JSONSyntaxError) {
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): try walkObject(depth: depth + 1, into: &structure)
        case UInt8(ascii: "["): try walkArray(depth: depth + 1, into: &structure)
        case UInt8(ascii: "\""):
            let start = offset + 1
            let flags = try scanString()
            structure.string(start..<(offset - 1), hasEscapes: flags.hasEscapes, isASCII: flags.isASCII)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            structure.literal(.bool(true))
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            structure.literal(.bool(false))
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            structure.literal(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): structure.number(try parseNumber())
        default: throw error("unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    private mutating func walkObject<Structure: JSONStructure>(
        depth: Int, into structure: inout Structure
    ) throws(JSONSyntaxError) {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        let container = structure.open(isArray: false)
        offset += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            structure.close(container, count: 0)
            return
        }
        var count = 0
        while true {
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let start = offset + 1
            let flags = try scanString()
            structure.key(start..<(offset - 1), hasEscapes: flags.hasEscapes, isASCII: flags.isASCII)
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
            offset += 1
            skipWhitespace()
            try walkValue(depth: depth, into: &structure)
            count += 1
            skipWhitespace()
            guard let more = continues(closing: UInt8(ascii: "}")) else {
                throw error(
                    current == nil ? "unexpected end of input in an object" : "expected ',' or '}' in an object")
            }
            if !more {
                structure.close(container, count: count)
                return
            }
        }
    }

    private mutating func walkArray<Structure: JSONStructure>(
        depth: Int, into structure: inout Structure
    ) throws(JSONSyntaxError) {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        let container = structure.open(isArray: true)
        offset += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            structure.close(container, count: 0)
            return
        }
        var count = 0
        while true {
            try walkValue(depth: depth, into: &structure)
            count += 1
            skipWhitespace()
            guard let more = continues(closing: UInt8(ascii: "]")) else {
                throw error(
                    current == nil ? "unexpected end of input in an array" : "expected ',' or ']' in an array")
            }
            if !more {
                structure.close(container, count: count)
                return
            }
        }
    }

    /// Checks a string as ``parseString()`` reads it — escapes, control characters, UTF-8 — and
    /// moves past it; returns whether it has escapes.
    @discardableResult
    package mutating func skipString() throws(JSONSyntaxError) -> Bool {
        try scanString().hasEscapes
    }

    /// Checks a string as ``parseString()`` reads it and moves past it; returns whether it has
    /// escapes and whether all its bytes are ASCII. Eight bytes are looked at a time until one is a
    /// quote, a backslash or a control character. The text between escapes is checked run by run —
    /// an escape's character is whole, so it cannot complete or break a run's UTF-8 — and only a run
    /// with a byte past ASCII needs checking. As in the parser, a bad escape or control character
    /// is reported before bad UTF-8 before it.
    package mutating func scanString() throws(JSONSyntaxError) -> (hasEscapes: Bool, isASCII: Bool) {
        offset += 1
        let start = offset
        let raw = UnsafeRawBufferPointer(bytes)
        var run = offset
        var runBits: UInt64 = 0
        var allBits: UInt64 = 0
        var hasEscapes = false
        var isValid = true
        while true {
            while offset + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let special = Self.specialBytes(word)
                if special != 0 {
                    // Straight to the first special byte: the lowest one flagged is one.
                    let before = special.trailingZeroBitCount >> 3
                    runBits |= word & ((1 << (UInt64(before) << 3)) &- 1)
                    offset += before
                    break
                }
                runBits |= word
                offset += 8
            }
            guard offset < bytes.count else { throw error("unterminated string") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                allBits |= runBits
                guard isValid, runBits & Self.highBits == 0 || Self.isValidUTF8(bytes, run..<offset) else {
                    throw JSONSyntaxError(offset: start, reason: "invalid UTF-8 in a string")
                }
                offset += 1
                return (hasEscapes, allBits & Self.highBits == 0)
            }
            if byte == UInt8(ascii: "\\") {
                allBits |= runBits
                isValid = isValid && (runBits & Self.highBits == 0 || Self.isValidUTF8(bytes, run..<offset))
                offset += 1
                if try escapedScalar().value >= 0x80 { allBits |= Self.highBits }
                hasEscapes = true
                run = offset
                runBits = 0
                continue
            }
            if byte < 0x20 { throw error("unescaped control character in a string") }
            runBits |= UInt64(byte)
            offset += 1
        }
    }

    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each of the eight bytes (in memory order, least significant first) that is
    /// a quote, a backslash or below 0x20, by the classic test for a zero byte,
    /// `(x - 0x01…) & ~x & 0x80…`, on the word XORed with each byte sought. A borrow can flag a byte
    /// above one that matches, never one below it or a word with no match: the lowest byte flagged
    /// is the first special one.
    @inline(__always) private static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let found =
            (quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes | (word &- ones &* 0x20) & ~word
        return found & highBits
    }

    @inline(__always) private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool
    {
        String.isValidUTF8(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[range])))
    }

    package mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw error("unexpected end of input") }
        let start = literal.utf8Start
        for index in 0..<count where bytes[offset + index] != start[index] {
            throw error("invalid literal")
        }
        offset += count
    }

    package mutating func parseString() throws(JSONSyntaxError) -> String {
        // Fast path: no escapes, so the bytes between the quotes, checked eight at a time, are the
        // string.
        var scan = self
        let (hasEscapes, _) = try scan.scanString()
        if !hasEscapes {
            let string = String(
                decoding: UnsafeBufferPointer(rebasing: bytes[offset + 1..<scan.offset - 1]), as: UTF8.self)
            offset = scan.offset
            return string
        }
        offset += 1
        let start = offset
        var buffer: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, reason: "invalid UTF-8 in a string")
                }
                return string
            case UInt8(ascii: "\\"):
                offset += 1
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw error("unescaped control character in a string")
            default:
                buffer.append(byte)
                offset += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONSyntaxError) {
        buffer.append(contentsOf: try escapedScalar().utf8)
    }

    /// The character an escape stands for; the cursor is just past its backslash.
    mutating func escapedScalar() throws(JSONSyntaxError) -> Unicode.Scalar {
        guard let byte = current else { throw error("unterminated escape") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if (0xD800...0xDBFF).contains(scalar) {
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                    bytes[offset + 1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate in a \\u escape") }
                offset += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in a \\u escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("unpaired surrogate in a \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
            return unicode
        default:
            throw error("invalid escape '\\\(Unicode.Scalar(byte))'")
        }
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt16 {
        guard offset + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt16(digit)
            offset += 1
        }
        return value
    }
}
