public import Foundation

/// A strict RFC 8259 parser producing ``JSONValue`` trees.
///
/// It validates UTF-8 and escapes, rejects trailing commas, leading zeros and control characters, and
/// bounds nesting depth so hostile input cannot overflow the stack. Checked against JSONTestSuite.
public struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted.
    public var maxDepth: Int

    /// Creates a parser.
    public init(maxDepth: Int = 512) {
        self.maxDepth = maxDepth
    }

    /// Parses one JSON text.
    ///
    /// - Parameter data: UTF-8 encoded JSON.
    /// - Returns: The parsed value.
    /// - Throws: ``JSONSyntaxError`` when the bytes are not one valid JSON text.
    public func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        let result: Result<JSONValue, JSONSyntaxError> = data.withUnsafeBytes { raw in
            var reader = Reader(bytes: raw.bindMemory(to: UInt8.self), maxDepth: maxDepth)
            do throws(JSONSyntaxError) {
                reader.skipWhitespace()
                let value = try reader.parseValue(depth: 0)
                reader.skipWhitespace()
                guard reader.offset == reader.bytes.count else {
                    throw reader.error("unexpected data after the JSON value")
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var offset = 0
    /// The size of the last object closed at each of the first levels: records in a list tend to
    /// have the same keys, so the next object at that level reserves room once instead of growing
    /// (and rehashing) several times.
    var sizeHints = [Int](repeating: 0, count: 16)

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset, reason: reason)
    }

    @inline(__always) var current: UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    @inline(__always) mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw error("unexpected end of input") }
        let start = literal.utf8Start
        for index in 0..<count where bytes[offset + index] != start[index] {
            throw error("invalid literal")
        }
        offset += count
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        offset += 1
        var object = [String: JSONValue](minimumCapacity: depth < sizeHints.count ? sizeHints[depth] : 0)
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return .object(object)
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
            offset += 1
            skipWhitespace()
            object[key] = try parseValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                offset += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                offset += 1
                if depth < sizeHints.count { sizeHints[depth] = object.count }
                return .object(object)
            case nil: throw error("unexpected end of input in an object")
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        offset += 1
        var array = [JSONValue]()
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return .array(array)
        }
        while true {
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                offset += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                offset += 1
                return .array(array)
            case nil: throw error("unexpected end of input in an array")
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        offset += 1
        let start = offset
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                guard let string = String.validatedUTF8(UnsafeBufferPointer(rebasing: bytes[start..<offset])) else {
                    throw JSONSyntaxError(offset: start, reason: "invalid UTF-8 in a string")
                }
                offset += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("unescaped control character in a string") }
            offset += 1
        }
        var buffer = [UInt8](bytes[start..<offset])
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
        guard let byte = current else { throw error("unterminated escape") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): buffer.append(0x22)
        case UInt8(ascii: "\\"): buffer.append(0x5C)
        case UInt8(ascii: "/"): buffer.append(0x2F)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
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
            buffer.append(contentsOf: String(Character(unicode)).utf8)
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

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
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
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isInteger, !isNegative, let unsigned = UInt64(text) {
            return .uint(unsigned)
        }
        guard let double = Double(text), double.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "number out of range")
        }
        return .double(double)
    }

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
