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

    package mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = offset
        var isNegative = false
        if current == UInt8(ascii: "-") {
            isNegative = true
            offset += 1
        }
        guard let first = current, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw error("expected a digit")
        }
        var isInteger = true
        // Accumulate negatively so that Int64.min parses without overflow.
        var accumulator: Int64 = 0
        var overflow = false
        if first == UInt8(ascii: "0") {
            offset += 1
            if let next = current, next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                throw error("leading zeros are not allowed")
            }
        } else {
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if !overflow {
                    let (times, o1) = accumulator.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                    overflow = o1 || o2
                    accumulator = next
                }
                offset += 1
            }
        }
        let integerEnd = offset
        var fractionEnd = offset
        var exponent = 0
        if current == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw error("expected a digit after '.'")
            }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { offset += 1 }
            fractionEnd = offset
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            var exponentSign = 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                if current == UInt8(ascii: "-") { exponentSign = -1 }
                offset += 1
            }
            guard let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw error("expected a digit in the exponent")
            }
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                // Past a million the exponent's size no longer changes the value; capping keeps it from overflowing.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(byte - UInt8(ascii: "0")) }
                offset += 1
            }
            exponent *= exponentSign
        }
        if isInteger && !overflow {
            if isNegative { return .int(accumulator) }
            if accumulator != .min { return .int(-accumulator) }
        }
        if !isInteger,
            let exact = exactInteger(
                digits: (isNegative ? start + 1 : start)..<integerEnd, fraction: integerEnd..<fractionEnd,
                exponent: exponent, isNegative: isNegative)
        {
            return exact
        }
        if !isInteger,
            let fast = nearestDouble(
                digits: (isNegative ? start + 1 : start)..<integerEnd, fraction: integerEnd..<fractionEnd,
                exponent: exponent)
        {
            return .double(isNegative ? -fast : fast)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, !isNegative, let unsigned = UInt64(text) {
            return .uint(unsigned)
        }
        guard let double = Double(text), double.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "number out of range")
        }
        return .double(double)
    }

    /// The `Double` nearest a literal's magnitude when it has at most 19 significant digits, their
    /// value is at most 2^53 and its power of ten is within ±22: then both are exact `Double`s and
    /// one multiplication or division rounds correctly (Clinger's fast path), as `Double(String)`
    /// would. `nil` otherwise, and the caller asks `Double(String)`.
    private func nearestDouble(digits: Range<Int>, fraction: Range<Int>, exponent: Int) -> Double? {
        let fractionDigits = fraction.isEmpty ? fraction : (fraction.lowerBound + 1)..<fraction.upperBound
        var significand: UInt64 = 0
        var count = 0
        func accumulate(_ range: Range<Int>) -> Bool {
            for index in range {
                let digit = UInt64(bytes[index] - UInt8(ascii: "0"))
                // Leading zeros are not significant.
                if count == 0 && digit == 0 { continue }
                count += 1
                guard count <= 19 else { return false }
                significand = significand * 10 + digit
            }
            return true
        }
        guard accumulate(digits), accumulate(fractionDigits), significand <= 1 << 53 else { return nil }
        let scale = exponent - fractionDigits.count
        guard (-22...22).contains(scale) else { return nil }
        let power = Self.powersOfTen[abs(scale)]
        return scale < 0 ? Double(significand) / power : Double(significand) * power
    }

    /// 10^0 … 10^22, each exact in a `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// The integer a literal with a fraction or an exponent spells exactly, such as `1.0` or `25e2`, when
    /// it fits in 64 bits; `nil` when the literal is not a whole number (`99e-99999999999` is not,
    /// though its nearest `Double` is 0) or does not fit. So integer fields accept exactly the
    /// literals whose value is an integer, and a `.double` never stands for one.
    private func exactInteger(digits: Range<Int>, fraction: Range<Int>, exponent: Int, isNegative: Bool) -> JSONValue? {
        // The fraction range starts at the '.', so its digits begin one byte later.
        let fractionDigits = fraction.isEmpty ? fraction : (fraction.lowerBound + 1)..<fraction.upperBound
        var scale = exponent - fractionDigits.count
        // Trailing zeros, in the fraction and then in the integer part, only raise the scale.
        var end = fractionDigits.isEmpty ? digits.upperBound : fractionDigits.upperBound
        var inFraction = !fractionDigits.isEmpty
        while true {
            let lower = inFraction ? fractionDigits.lowerBound : digits.lowerBound
            if end > lower, bytes[end - 1] == UInt8(ascii: "0") {
                end -= 1
                scale += 1
            } else if inFraction && end == lower {
                inFraction = false
                end = digits.upperBound
            } else {
                break
            }
        }
        // With trailing zeros gone the last digit left is not zero, so a negative scale means a
        // fraction (the common case, `46.8`, decided here without reading the digits again).
        if scale < 0 { return inFraction || end > digits.lowerBound ? nil : .int(0) }
        var magnitude: UInt64 = 0
        var overflow = false
        func append(_ range: Range<Int>) {
            for index in range {
                let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (next, o2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                magnitude = next
            }
        }
        if inFraction {
            append(digits)
            append(fractionDigits.lowerBound..<end)
        } else {
            append(digits.lowerBound..<end)
        }
        if magnitude == 0 && !overflow { return .int(0) }
        guard !overflow, scale <= 20 else { return nil }
        for _ in 0..<scale {
            let (next, o) = magnitude.multipliedReportingOverflow(by: 10)
            guard !o else { return nil }
            magnitude = next
        }
        if isNegative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return .int(Int64(truncatingIfNeeded: 0 &- magnitude))
        }
        return magnitude <= UInt64(Int64.max) ? .int(Int64(magnitude)) : .uint(magnitude)
    }
}

/// What a walk over a JSON value (``JSONCursor/walkValue(depth:into:)``) reports, in text order.
/// Ranges are byte offsets; a string's range excludes its quotes.
package protocol JSONStructure {
    /// An array or object starts; the token returned is handed back when it closes.
    mutating func open(isArray: Bool) -> Int
    /// The container `open` returned `token` for closes with `count` elements or members.
    mutating func close(_ token: Int, count: Int)
    /// A member's key; `isASCII` when its text, escapes read, is all ASCII.
    mutating func key(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool)
    /// A string value.
    mutating func string(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool)
    /// A number, as the parser reads it.
    mutating func number(_ value: JSONValue)
    /// `true`, `false` or `null`.
    mutating func literal(_ value: JSONValue)
}

/// The structure of a value only checked: nothing is recorded.
struct UnrecordedStructure: JSONStructure {
    // A byte of storage: an empty value passed `inout` may have no address at all, and the thread
    // sanitizer's instrumentation of the access then writes shadow memory for a bogus one (it
    // crashed so).
    private var unused: UInt8 = 0

    @inline(__always) func open(isArray: Bool) -> Int { 0 }
    @inline(__always) func close(_ token: Int, count: Int) {}
    @inline(__always) func key(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool) {}
    @inline(__always) func string(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool) {}
    @inline(__always) func number(_ value: JSONValue) {}
    @inline(__always) func literal(_ value: JSONValue) {}
}
