/// A value inside a JSON text, read where it lies instead of through a tree. Valid only while its
/// bytes are, and only once the text around it has been checked as the parser would (so its syntax
/// and UTF-8 are known to be sound) or is checked as it is read.
package struct JSONTextValue {
    package let bytes: UnsafeBufferPointer<UInt8>
    package let offset: Int
    /// The nesting limit the text is checked against.
    package let maxDepth: Int
    /// The arrays and objects around the value, counted against ``maxDepth`` as the parser counts them.
    package let depth: Int

    package init(bytes: UnsafeBufferPointer<UInt8>, offset: Int, maxDepth: Int, depth: Int) {
        self.bytes = bytes
        self.offset = offset
        self.maxDepth = maxDepth
        self.depth = depth
    }

    package var cursor: JSONCursor { JSONCursor(bytes, offset: offset, maxDepth: maxDepth) }

    var isNull: Bool { offset < bytes.count && bytes[offset] == UInt8(ascii: "n") }

    /// The value as the JSON tree holds it.
    package func json() throws(JSONSyntaxError) -> JSONValue {
        var cursor = cursor
        return try JSONParser.value(at: &cursor, depth: depth)
    }

    /// The value and where it ends when it is a string, a number, `true`, `false` or `null`, read
    /// and checked as the parser reads it, without a tree.
    package func scalar() -> (value: JSONValue, end: Int)? {
        var cursor = cursor
        guard let first = cursor.current else { return nil }
        let value: JSONValue
        do throws(JSONSyntaxError) {
            switch first {
            case UInt8(ascii: "\""): value = .string(try cursor.parseString())
            case UInt8(ascii: "t"):
                try cursor.expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try cursor.expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try cursor.expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = try cursor.parseNumber()
            default: return nil
            }
        } catch {
            return nil
        }
        return (value, cursor.offset)
    }
}
