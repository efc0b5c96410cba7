public import Foundation

/// Reads single field values with one response's options. Passed to generated code.
///
/// An overload per common field type, resolved at compile time in generated code: each reads a
/// value read in place from its bytes when its type is exactly the field's, and otherwise hands the
/// tree's value to the tree's decoder (``FieldSource``). Overloads rather than type checks inside
/// one generic function, so nothing is cast.
@_documentation(visibility: internal)
public struct FieldDecoder {
    package let coder: FieldCoder

    package init(coder: FieldCoder) { self.coder = coder }

    /// Decodes a `String` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: FieldSource) throws -> String {
        switch value.backing {
        case .tree(let tree): try coder.decode(String.self, from: tree)
        case .text(let text): try string(text)
        case .packed(let packed): try string(packed)
        }
    }

    /// Decodes an `Int` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: FieldSource) throws -> Int {
        switch value.backing {
        case .tree(let tree): try coder.decode(Int.self, from: tree)
        case .text(let text): try int(text)
        case .packed(let packed): try int(packed)
        }
    }

    /// Decodes a `Double` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: FieldSource) throws -> Double {
        switch value.backing {
        case .tree(let tree): try coder.decode(Double.self, from: tree)
        case .text(let text): try double(text)
        case .packed(let packed): try double(packed)
        }
    }

    /// Decodes a `Bool` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: FieldSource) throws -> Bool {
        switch value.backing {
        case .tree(let tree): try coder.decode(Bool.self, from: tree)
        case .text(let text): try bool(text)
        case .packed(let packed): try bool(packed)
        }
    }

    /// Decodes a `Date` field: a string in one of the configured formats, or seconds since 1970.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decode(_ value: FieldSource) throws -> Date {
        switch value.backing {
        case .tree(let tree): try coder.decode(Date.self, from: tree)
        case .text(let text): try date(text)
        case .packed(let packed): try date(packed)
        }
    }

    /// Decodes a `[String]` field.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode(_ value: FieldSource) throws -> [String] {
        switch value.backing {
        case .tree(let tree): try coder.decode([String].self, from: tree)
        case .text(let text): try strings(text)
        case .packed(let packed): try strings(packed)
        }
    }

    /// Decodes a field of any other type through its JSON form.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decode<Value: Decodable>(_ value: FieldSource) throws -> Value {
        switch value.backing {
        case .tree(let tree): try coder.decode(Value.self, from: tree)
        case .text(let text): try general(text)
        case .packed(let packed): try coder.decode(Value.self, from: packed.json())
        }
    }

    /// Decodes an optional `String` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: FieldSource) throws -> String? {
        value.isNull ? nil : try decode(value) as String
    }

    /// Decodes an optional `Int` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: FieldSource) throws -> Int? {
        value.isNull ? nil : try decode(value) as Int
    }

    /// Decodes an optional `Double` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: FieldSource) throws -> Double? {
        value.isNull ? nil : try decode(value) as Double
    }

    /// Decodes an optional `Bool` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional(_ value: FieldSource) throws -> Bool? {
        value.isNull ? nil : try decode(value) as Bool
    }

    /// Decodes an optional `Date` field: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type or format.
    public func decodeOptional(_ value: FieldSource) throws -> Date? {
        value.isNull ? nil : try decode(value) as Date
    }

    /// Decodes an optional field of any other type through its JSON form: `null` is `nil`.
    ///
    /// - Throws: `DecodingError` for a value of the wrong type.
    public func decodeOptional<Value: Decodable>(_ value: FieldSource) throws -> Value? {
        // Spelled out: `nil : try decode(value)` would decode an Optional, one generic hop more.
        if value.isNull { return nil }
        return try decode(value) as Value
    }
}
