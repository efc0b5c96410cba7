public import Foundation

/// A field value inside a JSON body being merged, read where it lies instead of through a tree.
/// Made by the merge and handed to generated code; valid only while that merge runs, and only once
/// the merge has checked it as the parser would (so its syntax and UTF-8 are known to be sound).
///
/// Values whose JSON type is exactly the field's type are read in place; anything else is built
/// as the ``JSONValue`` the tree would hold and decoded by the same code as the tree, so both
/// paths give the same values and the same errors.
@_documentation(visibility: internal)
public struct JSONField {
    let bytes: UnsafeBufferPointer<UInt8>
    let offset: Int
    /// The nesting limit the body was checked against.
    let maxDepth: Int

    var cursor: JSONCursor { JSONCursor(bytes, offset: offset, maxDepth: maxDepth) }

    var isNull: Bool { bytes[offset] == UInt8(ascii: "n") }

    /// The value as the JSON tree holds it.
    func json() throws -> JSONValue {
        var cursor = cursor
        return try JSONParser.value(at: &cursor, depth: 0)
    }

    /// The value when it is a string, a number, `true`, `false` or `null`, read without a tree.
    func scalar() -> JSONValue? {
        var cursor = cursor
        switch bytes[offset] {
        case UInt8(ascii: "\""): return (try? cursor.parseString()).map(JSONValue.string)
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try? cursor.parseNumber()
        default: return nil
        }
    }
}

// As for MessagePack (`MessagePackField.swift`): an overload per common field type, resolved at
// compile time in generated code, reading the value in place when its type is exactly the field's
// and otherwise handing the tree's value to the tree's decoder.
extension FieldDecoder {
    /// The tree's decoding of the value, for every case the overloads do not read themselves.
    private func general<Value: Decodable>(_ value: JSONField, scalar: JSONValue? = nil) throws -> Value {
        if let scalar { return try coder.decode(Value.self, from: scalar) }
        var cursor = value.cursor
        return try coder.decode(Value.self, fromJSONAt: &cursor)
    }

    /// Decodes a `String` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> String {
        let scalar = value.scalar()
        if case .string(let string)? = scalar { return string }
        return try general(value, scalar: scalar)
    }

    /// Decodes an `Int` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> Int {
        let scalar = value.scalar()
        switch scalar {
        case .int(let int)?: if let exact = Int(exactly: int) { return exact }
        case .uint(let uint)?: if let exact = Int(exactly: uint) { return exact }
        default: break
        }
        return try general(value, scalar: scalar)
    }

    /// Decodes a `Double` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> Double {
        let scalar = value.scalar()
        switch scalar {
        case .double(let double)?: return double
        case .int(let int)?: return Double(int)
        case .uint(let uint)?: return Double(uint)
        default: return try general(value, scalar: scalar)
        }
    }

    /// Decodes a `Bool` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> Bool {
        let scalar = value.scalar()
        if case .bool(let bool)? = scalar { return bool }
        return try general(value, scalar: scalar)
    }

    /// Decodes a `Date` field: a string in one of the configured formats, or seconds since 1970.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decode(_ value: JSONField) throws -> Date {
        let scalar = value.scalar()
        switch scalar {
        case .string(let string)?:
            if let date = coder.options.dateFormats.date(from: string) { return date }
        case .int(let int)?:
            if let date = DateFormat.date(secondsSince1970: Double(int)) { return date }
        case .uint(let uint)?:
            if let date = DateFormat.date(secondsSince1970: Double(uint)) { return date }
        case .double(let double)?:
            if let date = DateFormat.date(secondsSince1970: double) { return date }
        default: break
        }
        // Anything else, including a number outside the supported dates, takes the general path,
        // which reports the error with the field's path.
        return try general(value, scalar: scalar)
    }

    /// Decodes a `[String]` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> [String] {
        var cursor = value.cursor
        if cursor.current == UInt8(ascii: "[") {
            cursor.offset += 1
            var strings: [String] = []
            cursor.skipWhitespace()
            if cursor.current == UInt8(ascii: "]") { return strings }
            while cursor.current == UInt8(ascii: "\""), let string = try? cursor.parseString() {
                strings.append(string)
                cursor.skipWhitespace()
                guard cursor.current == UInt8(ascii: ",") else {
                    if cursor.current == UInt8(ascii: "]") { return strings }
                    break
                }
                cursor.offset += 1
                cursor.skipWhitespace()
            }
        }
        return try general(value)
    }

    /// Decodes a field of any other type through its JSON form.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode<Value: Decodable>(_ value: JSONField) throws -> Value {
        try general(value)
    }

    /// Decodes an optional `String` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: JSONField) throws -> String? {
        value.isNull ? nil : try decode(value) as String
    }

    /// Decodes an optional `Int` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: JSONField) throws -> Int? {
        value.isNull ? nil : try decode(value) as Int
    }

    /// Decodes an optional `Double` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: JSONField) throws -> Double? {
        value.isNull ? nil : try decode(value) as Double
    }

    /// Decodes an optional `Bool` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: JSONField) throws -> Bool? {
        value.isNull ? nil : try decode(value) as Bool
    }

    /// Decodes an optional `Date` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decodeOptional(_ value: JSONField) throws -> Date? {
        value.isNull ? nil : try decode(value) as Date
    }

    /// Decodes an optional field of any other type through its JSON form: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional<Value: Decodable>(_ value: JSONField) throws -> Value? {
        value.isNull ? nil : try general(value)
    }
}
