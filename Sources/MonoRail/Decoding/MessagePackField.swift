public import Foundation

/// A field value inside a MessagePack body being merged, read where it lies instead of through a
/// tree. Made by the merge and handed to generated code; valid only while that merge runs, and only
/// once the merge has checked it as the tree reader would (so strings are known to be UTF-8).
///
/// Values whose wire type is exactly the field's type are read in place; anything else (a number
/// in a string field, a nested struct, a timestamp) is turned into the ``JSONValue`` a JSON body
/// would have given and decoded by the same code as JSON, so both formats give the same values
/// and the same errors.
@_documentation(visibility: internal)
public struct MessagePackField {
    let bytes: UnsafeRawBufferPointer
    let offset: Int
    /// The nesting limit the body was checked against.
    let maxDepth: Int

    var cursor: MessagePackCursor { MessagePackCursor(bytes, offset: offset) }

    var isNil: Bool { bytes[offset] == 0xc0 }

    /// The value as the JSON tree holds it.
    func json() throws -> JSONValue {
        var cursor = cursor
        return try MessagePackReader.json(&cursor, depth: 0, maxDepth: maxDepth)
    }

    /// The header of the value, and a cursor just past it.
    func header() -> (MessagePackCursor.Header, MessagePackCursor)? {
        var cursor = cursor
        guard let header = try? cursor.header() else { return nil }
        return (header, cursor)
    }
}

// Each overload reads the value in place when its wire type is exactly the field's type and
// otherwise decodes its JSON form with the JSON path; the generic ones always do (measured: for a
// nested struct, `init(from:)` costs the same from bytes as from its tree). Overloads rather
// than type checks inside one generic function: generated code calls them with the field's static
// type, so the call is resolved at compile time and nothing is cast.
extension FieldDecoder {
    /// Decodes a `String` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: MessagePackField) throws -> String {
        if case (.string(let count), var cursor)? = value.header() { return cursor.checkedString(count) }
        return try coder.decode(String.self, from: value.json())
    }

    /// Decodes an `Int` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: MessagePackField) throws -> Int {
        let exact: Int? =
            switch value.header()?.0 {
            case .int(let int): Int(exactly: int)
            case .uint(let uint): Int(exactly: uint)
            case .double(let double): Int(exactly: double)
            case .float(let float): Int(exactly: float)
            default: nil
            }
        if let exact { return exact }
        return try coder.decode(Int.self, from: value.json())
    }

    /// Decodes a `Double` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: MessagePackField) throws -> Double {
        switch value.header()?.0 {
        case .double(let double): return double
        case .float(let float): return Double(float)
        case .int(let int): return Double(int)
        case .uint(let uint): return Double(uint)
        default: return try coder.decode(Double.self, from: value.json())
        }
    }

    /// Decodes a `Bool` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: MessagePackField) throws -> Bool {
        if case .bool(let bool)? = value.header()?.0 { return bool }
        return try coder.decode(Bool.self, from: value.json())
    }

    /// Decodes a `Date` field: a string in one of the configured formats, or seconds since 1970.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decode(_ value: MessagePackField) throws -> Date {
        switch value.header() {
        case (.string(let count), var cursor)?:
            if let date = coder.options.dateFormats.date(from: cursor.checkedString(count)) { return date }
        case (.int(let int), _)?:
            if let date = DateFormat.date(secondsSince1970: Double(int)) { return date }
        case (.uint(let uint), _)?:
            if let date = DateFormat.date(secondsSince1970: Double(uint)) { return date }
        case (.double(let double), _)?:
            if let date = DateFormat.date(secondsSince1970: double) { return date }
        default: break
        }
        // Anything else, including a number outside the supported dates, takes the general path,
        // which reports the error with the field's path.
        return try coder.decode(Date.self, from: value.json())
    }

    /// Decodes a `[String]` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: MessagePackField) throws -> [String] {
        if case (.array(let count), var cursor)? = value.header() {
            var strings: [String] = []
            strings.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count {
                guard case .string(let length)? = try? cursor.header() else { break }
                strings.append(cursor.checkedString(length))
            }
            if strings.count == count { return strings }
        }
        return try coder.decode([String].self, from: value.json())
    }

    /// Decodes a field of any other type through its JSON form.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode<Value: Decodable>(_ value: MessagePackField) throws -> Value {
        try coder.decode(Value.self, from: value.json())
    }

    /// Decodes an optional `String` field: `nil` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: MessagePackField) throws -> String? {
        value.isNil ? nil : try decode(value) as String
    }

    /// Decodes an optional `Int` field: `nil` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: MessagePackField) throws -> Int? {
        value.isNil ? nil : try decode(value) as Int
    }

    /// Decodes an optional `Double` field: `nil` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: MessagePackField) throws -> Double? {
        value.isNil ? nil : try decode(value) as Double
    }

    /// Decodes an optional `Bool` field: `nil` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: MessagePackField) throws -> Bool? {
        value.isNil ? nil : try decode(value) as Bool
    }

    /// Decodes an optional `Date` field: `nil` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decodeOptional(_ value: MessagePackField) throws -> Date? {
        value.isNil ? nil : try decode(value) as Date
    }

    /// Decodes an optional field of any other type through its JSON form: `nil` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional<Value: Decodable>(_ value: MessagePackField) throws -> Value? {
        value.isNil ? nil : try coder.decode(Value.self, from: value.json())
    }
}
