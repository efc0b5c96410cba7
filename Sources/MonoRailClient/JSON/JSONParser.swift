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
            var reader = TreeReader(cursor: JSONCursor(raw.bindMemory(to: UInt8.self), maxDepth: maxDepth))
            do throws(JSONSyntaxError) {
                reader.cursor.skipWhitespace()
                let value = try reader.parseValue(depth: 0)
                reader.cursor.skipWhitespace()
                guard reader.cursor.isAtEnd else {
                    throw reader.cursor.error("unexpected data after the JSON value")
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension JSONParser {
    /// Checks that the bytes are one JSON text exactly as ``parse(_:)`` would, building nothing:
    /// the check MonoRail's in-place readers make before they read a value.
    ///
    /// - Throws: ``JSONSyntaxError`` when the bytes are not one valid JSON text.
    public func validate(_ data: Data) throws(JSONSyntaxError) {
        let result: JSONSyntaxError? = data.withUnsafeBytes { raw in
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self), maxDepth: maxDepth)
            do throws(JSONSyntaxError) {
                cursor.skipWhitespace()
                try cursor.skipValue(depth: 0)
                cursor.skipWhitespace()
                guard cursor.isAtEnd else { throw cursor.error("unexpected data after the JSON value") }
                return nil
            } catch {
                return error
            }
        }
        if let result { throw result }
    }

    /// The tree of the value at the cursor, which ends past it. `depth` is the nesting of the arrays
    /// and objects around the value, counted against ``maxDepth`` as in a whole text.
    package static func value(at cursor: inout JSONCursor, depth: Int) throws(JSONSyntaxError) -> JSONValue {
        var reader = TreeReader(cursor: cursor)
        defer { cursor = reader.cursor }
        return try reader.parseValue(depth: depth)
    }
}

/// Builds the tree of a JSON text on a ``JSONCursor``, which reads and checks each scalar.
private struct TreeReader {
    var cursor: JSONCursor
    /// The size of the last object closed at each of the first levels: records in a list tend to
    /// have the same keys, so the next object at that level reserves room once instead of growing
    /// (and rehashing) several times.
    var sizeHints = [Int](repeating: 0, count: 16)

    init(cursor: JSONCursor) {
        self.cursor = cursor
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard let byte = cursor.current else { throw cursor.error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try cursor.parseString())
        case UInt8(ascii: "t"):
            try cursor.expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try cursor.expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try cursor.expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try cursor.parseNumber()
        default: throw cursor.error("unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= cursor.maxDepth else { throw cursor.error("nesting deeper than \(cursor.maxDepth) levels") }
        cursor.offset += 1
        var object = [String: JSONValue](minimumCapacity: depth < sizeHints.count ? sizeHints[depth] : 0)
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "}") {
            cursor.offset += 1
            return .object(object)
        }
        while true {
            guard cursor.current == UInt8(ascii: "\"") else { throw cursor.error("expected a string key") }
            let key = try cursor.parseString()
            cursor.skipWhitespace()
            guard cursor.current == UInt8(ascii: ":") else { throw cursor.error("expected ':' after an object key") }
            cursor.offset += 1
            cursor.skipWhitespace()
            object[key] = try parseValue(depth: depth)
            cursor.skipWhitespace()
            guard let more = cursor.continues(closing: UInt8(ascii: "}")) else {
                throw cursor.error(
                    cursor.current == nil ? "unexpected end of input in an object" : "expected ',' or '}' in an object")
            }
            if !more {
                if depth < sizeHints.count { sizeHints[depth] = object.count }
                return .object(object)
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= cursor.maxDepth else { throw cursor.error("nesting deeper than \(cursor.maxDepth) levels") }
        cursor.offset += 1
        var array = [JSONValue]()
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "]") {
            cursor.offset += 1
            return .array(array)
        }
        while true {
            array.append(try parseValue(depth: depth))
            cursor.skipWhitespace()
            guard let more = cursor.continues(closing: UInt8(ascii: "]")) else {
                throw cursor.error(
                    cursor.current == nil ? "unexpected end of input in an array" : "expected ',' or ']' in an array")
            }
            if !more { return .array(array) }
        }
    }

}
