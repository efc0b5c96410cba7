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
    /// The arrays and objects around the value, counted against ``maxDepth`` as the parser counts them.
    let depth: Int

    var cursor: JSONCursor { JSONCursor(bytes, offset: offset, maxDepth: maxDepth) }

    var isNull: Bool { offset < bytes.count && bytes[offset] == UInt8(ascii: "n") }

    /// The value as the JSON tree holds it.
    func json() throws -> JSONValue {
        var cursor = cursor
        return try JSONParser.value(at: &cursor, depth: depth)
    }

    /// The value and where it ends when it is a string, a number, `true`, `false` or `null`, read
    /// and checked as the parser reads it, without a tree.
    func scalar() -> (value: JSONValue, end: Int)? {
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

// As for MessagePack (`MessagePackField.swift`): an overload per common field type, resolved at
// compile time in generated code, reading the value in place when its type is exactly the field's
// and otherwise handing the tree's value to the tree's decoder.
extension FieldDecoder {
    /// Tells the record reader where the value ends: said only by a read that checked all of it as
    /// the parser would, so the reader need not check it again.
    private func read(to end: Int) { coder.valueEnd = end }

    /// The tree's decoding of the value, for every case the overloads do not read themselves.
    private func general<Value: Decodable>(_ value: JSONField, scalar: (value: JSONValue, end: Int)? = nil) throws
        -> Value
    {
        if let scalar {
            read(to: scalar.end)
            return try coder.decode(Value.self, from: scalar.value)
        }
        var cursor = value.cursor
        let decoded = try coder.decode(Value.self, fromJSONAt: &cursor, depth: value.depth)
        read(to: cursor.offset)
        return decoded
    }

    /// Decodes a `String` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> String {
        let scalar = value.scalar()
        if case .string(let string)? = scalar?.value, let end = scalar?.end {
            read(to: end)
            return string
        }
        return try general(value, scalar: scalar)
    }

    /// Decodes an `Int` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> Int {
        let scalar = value.scalar()
        switch scalar?.value {
        case .int(let int)?:
            if let exact = Int(exactly: int), let end = scalar?.end {
                read(to: end)
                return exact
            }
        case .uint(let uint)?:
            if let exact = Int(exactly: uint), let end = scalar?.end {
                read(to: end)
                return exact
            }
        default: break
        }
        return try general(value, scalar: scalar)
    }

    /// Decodes a `Double` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> Double {
        guard let scalar = value.scalar() else { return try general(value) }
        let double: Double
        switch scalar.value {
        case .double(let value): double = value
        case .int(let int): double = Double(int)
        case .uint(let uint): double = Double(uint)
        default: return try general(value, scalar: scalar)
        }
        read(to: scalar.end)
        return double
    }

    /// Decodes a `Bool` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: JSONField) throws -> Bool {
        let scalar = value.scalar()
        if case .bool(let bool)? = scalar?.value, let end = scalar?.end {
            read(to: end)
            return bool
        }
        return try general(value, scalar: scalar)
    }

    /// Decodes a `Date` field: a string in one of the configured formats, or seconds since 1970.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decode(_ value: JSONField) throws -> Date {
        // The common case, a date string without escapes, is read from its bytes.
        var cursor = value.cursor
        if cursor.current == UInt8(ascii: "\""), let scanned = try? cursor.scanString(), !scanned.hasEscapes,
            let date = coder.options.dateFormats.date(
                fromUTF8: UnsafeBufferPointer(rebasing: value.bytes[(value.offset + 1)..<(cursor.offset - 1)]))
        {
            read(to: cursor.offset)
            return date
        }
        let scalar = value.scalar()
        var date: Date?
        switch scalar?.value {
        case .int(let int)?: date = DateFormat.date(secondsSince1970: Double(int))
        case .uint(let uint)?: date = DateFormat.date(secondsSince1970: Double(uint))
        case .double(let double)?: date = DateFormat.date(secondsSince1970: double)
        default: break
        }
        if let date, let end = scalar?.end {
            read(to: end)
            return date
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
        // The array is checked as the parser checks it, its depth included, or the general path reads it.
        if cursor.current == UInt8(ascii: "["), value.depth + 1 <= value.maxDepth {
            cursor.offset += 1
            var strings: [String] = []
            cursor.skipWhitespace()
            if cursor.current == UInt8(ascii: "]") {
                read(to: cursor.offset + 1)
                return strings
            }
            // Room for a few at once: grown one by one, three strings cost three allocations.
            strings.reserveCapacity(4)
            while cursor.current == UInt8(ascii: "\""), let string = try? cursor.parseString() {
                strings.append(string)
                cursor.skipWhitespace()
                guard cursor.current == UInt8(ascii: ",") else {
                    if cursor.current == UInt8(ascii: "]") {
                        read(to: cursor.offset + 1)
                        return strings
                    }
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
        // Spelled out: `nil : try general(value)` would decode an Optional, one generic hop more.
        if value.isNull { return nil }
        return try general(value) as Value
    }
}
