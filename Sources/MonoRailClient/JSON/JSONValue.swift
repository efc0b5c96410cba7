public import Foundation

/// A JSON value: free-form data, request parameters, and the tree responses are decoded from.
///
/// Literals build it naturally:
///
/// ```swift
/// let parameters: JSONValue = ["company": "MonoRail Co.", "tags": ["fast", "electric"], "cars": 5]
/// parameters["tags"]?[0]?.stringValue  // "fast"
/// ```
///
/// Integers and floating-point numbers are kept apart (``int(_:)``, ``double(_:)``), so an id sent
/// as `1` comes back as `1`, never `1.0`. The parsers read every number whose value is a 64-bit
/// integer as one, however it is written (`1`, `1.0`, `1e0`), so a ``double(_:)`` is never an
/// integer in disguise and integer fields can refuse it. Numbers compare by value: `.int(25)`
/// equals `.double(25)`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number whose value is an integer that fits in `Int64`.
    case int(Int64)
    /// An integer above `Int64.max` but within `UInt64`.
    case uint(UInt64)
    /// Any other number: one with a fraction, beyond 64 bits, or rounded to a `Double` from digits
    /// that were not an integer (`99e-99999999999` is `0.0`, not `0`).
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object. Key order is not kept.
    case object([String: JSONValue])
}

// MARK: - Equality

extension JSONValue {
    /// Whether two values are the same JSON: numbers compare by value across ``int(_:)``,
    /// ``uint(_:)`` and ``double(_:)``; arrays element by element; objects member by member.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.uint(let a), .uint(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.int(let a), .uint(let b)), (.uint(let b), .int(let a)): UInt64(exactly: a) == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Int64(exactly: b) == a
        case (.uint(let a), .double(let b)), (.double(let b), .uint(let a)): UInt64(exactly: b) == a
        default: false
        }
    }

    /// Hashes numbers by value, as ``==(_:_:)`` compares them.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(3 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .int(let value): Self.hashNumber(int: value, uint: nil, double: 0, into: &hasher)
        case .uint(let value): Self.hashNumber(int: Int64(exactly: value), uint: value, double: 0, into: &hasher)
        case .double(let value):
            Self.hashNumber(int: Int64(exactly: value), uint: UInt64(exactly: value), double: value, into: &hasher)
        }
    }

    /// One hash per numeric value: as an `Int64` when it is one, else as a `UInt64`, else as a `Double`.
    private static func hashNumber(int: Int64?, uint: UInt64?, double: Double, into hasher: inout Hasher) {
        if let int {
            hasher.combine(5 as UInt8)
            hasher.combine(int)
        } else if let uint {
            hasher.combine(6 as UInt8)
            hasher.combine(uint)
        } else {
            hasher.combine(7 as UInt8)
            hasher.combine(double)
        }
    }
}

// MARK: - Accessors

extension JSONValue {
    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The element at `index` when this is an array and the index is in range.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when this is a number with an exact integer value.
    public var intValue: Int? {
        switch self {
        case .int(let value): Int(exactly: value)
        case .uint(let value): Int(exactly: value)
        case .double(let value): Int(exactly: value)
        default: nil
        }
    }

    /// Whether this is ``int(_:)`` or ``uint(_:)``: a number whose value is a 64-bit integer.
    package var isInteger: Bool {
        switch self {
        case .int, .uint: true
        default: false
        }
    }

    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .uint(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        // A pattern, not `==`: the numeric-aware `==` would build and compare a pair of values.
        if case .null = self { true } else { false }
    }

    /// Follows a dot-separated path of object keys, such as `"data.result"`.
    ///
    /// - Parameter path: Keys separated by dots; an empty path returns `self`.
    /// - Returns: The value at the path, or `nil` when a key is missing.
    public func value(atPath path: String) -> JSONValue? {
        var current = self
        for key in path.split(separator: ".", omittingEmptySubsequences: true) {
            guard let next = current[String(key)] else { return nil }
            current = next
        }
        return current
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A floating-point number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: - Codable

extension JSONValue: Codable {
    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        if let decoder = decoder as? ValueDecoderImpl {
            self = decoder.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .uint(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as it is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .uint(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// The value as compact UTF-8 JSON.
    ///
    /// - Parameter sortedKeys: Write object members in key order, for stable output.
    /// - Returns: The JSON bytes. Non-finite doubles, which JSON cannot express, are written as `null`.
    public func jsonData(sortedKeys: Bool = false) -> Data {
        JSONWriter.serialize(self, sortedKeys: sortedKeys)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON with sorted keys.
    public var description: String {
        String(decoding: JSONWriter.serialize(self, sortedKeys: true), as: UTF8.self)
    }
}

extension JSONValue {
    /// What kind of value this is, as an error message says it: `null`, `a number`, `an object`.
    package var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .int, .uint, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
