import Foundation

// ApiModel's named transforms, which never fail: a value they cannot read becomes their fallback
// (`0`, `""`, `false`), as `IntTransform` returns 0 when `integerValue` has nothing. For a field
// whose server sends numbers as strings, or nothing, where a default is the right reading.

/// Reads any wire value as an `Int`: integers, numbers (truncated), numeric strings and Booleans;
/// anything else, or a number out of range, is `0`. ApiModel's `IntTransform`.
public struct IntTransform: FieldTransform {
    /// Creates the transform.
    public init() {}

    /// The value as an integer, else `0`.
    public func decode(_ value: JSONValue) throws -> Int {
        switch value {
        case .int(let int): return Int(exactly: int) ?? 0
        case .uint(let uint): return Int(exactly: uint) ?? 0
        case .double(let double): return Self.truncated(double)
        case .bool(let bool): return bool ? 1 : 0
        case .string(let string):
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            return Int(trimmed) ?? Double(trimmed).map(Self.truncated) ?? 0
        case .null, .array, .object: return 0
        }
    }

    /// Writes the integer.
    public func encode(_ value: Int) throws -> JSONValue { .int(Int64(value)) }

    private static func truncated(_ double: Double) -> Int {
        // Outside Int's range (or NaN) a conversion would trap: that is the fallback too.
        guard double.isFinite, double > -9.3e18, double < 9.3e18 else { return 0 }
        return Int(double)
    }
}

/// Reads any wire value as a `Double`: numbers, numeric strings and Booleans; anything else, or a
/// value that is not finite, is `0`. ApiModel's `DoubleTransform`.
public struct DoubleTransform: FieldTransform {
    /// Creates the transform.
    public init() {}

    /// The value as a number, else `0`.
    public func decode(_ value: JSONValue) throws -> Double {
        let number: Double? =
            switch value {
            case .int, .uint, .double: value.doubleValue
            case .bool(let bool): bool ? 1 : 0
            case .string(let string): Double(string.trimmingCharacters(in: .whitespaces))
            case .null, .array, .object: nil
            }
        guard let number, number.isFinite else { return 0 }
        return number
    }

    /// Writes the number; JSON has no infinity or NaN.
    public func encode(_ value: Double) throws -> JSONValue {
        guard value.isFinite else { throw FieldTransformError("\(value) is not a finite number") }
        return .double(value)
    }
}

/// Reads any wire value as a `Float`, as ``DoubleTransform`` does; a number beyond `Float`'s range
/// is `0`. ApiModel's `FloatTransform`.
public struct FloatTransform: FieldTransform {
    /// Creates the transform.
    public init() {}

    /// The value as a number, else `0`.
    public func decode(_ value: JSONValue) throws -> Float {
        let float = Float(try DoubleTransform().decode(value))
        return float.isFinite ? float : 0
    }

    /// Writes the number; JSON has no infinity or NaN.
    public func encode(_ value: Float) throws -> JSONValue { try DoubleTransform().encode(Double(value)) }
}

/// Reads any wire value as a `String`: strings, numbers and Booleans as their text; anything else
/// is `""`. ApiModel's `StringTransform`.
public struct StringTransform: FieldTransform {
    /// Creates the transform.
    public init() {}

    /// The value as text, else `""`.
    public func decode(_ value: JSONValue) throws -> String {
        switch value {
        case .string(let string): string
        case .int(let int): String(int)
        case .uint(let uint): String(uint)
        case .double(let double): double.isFinite ? String(double) : ""
        case .bool(let bool): bool ? "true" : "false"
        case .null, .array, .object: ""
        }
    }

    /// Writes the string.
    public func encode(_ value: String) throws -> JSONValue { .string(value) }
}

/// Reads any wire value as a `Bool`: Booleans, numbers (non-zero is `true`) and the strings
/// `"true"`, `"yes"`, `"1"` in any case; anything else is `false`. ApiModel's `BoolTransform`.
public struct BoolTransform: FieldTransform {
    /// Creates the transform.
    public init() {}

    /// The value as a Boolean, else `false`.
    public func decode(_ value: JSONValue) throws -> Bool {
        switch value {
        case .bool(let bool): bool
        case .int(let int): int != 0
        case .uint(let uint): uint != 0
        case .double(let double): double != 0 && !double.isNaN
        case .string(let string):
            ["true", "yes", "1"].contains(string.trimmingCharacters(in: .whitespaces).lowercased())
        case .null, .array, .object: false
        }
    }

    /// Writes the Boolean.
    public func encode(_ value: Bool) throws -> JSONValue { .bool(value) }
}

extension FieldTransform where Self == IntTransform {
    /// Any value as an `Int`, else `0`: ApiModel's `IntTransform()`.
    public static var int: IntTransform { IntTransform() }
}

extension FieldTransform where Self == DoubleTransform {
    /// Any value as a `Double`, else `0`: ApiModel's `DoubleTransform()`.
    public static var double: DoubleTransform { DoubleTransform() }
}

extension FieldTransform where Self == FloatTransform {
    /// Any value as a `Float`, else `0`: ApiModel's `FloatTransform()`.
    public static var float: FloatTransform { FloatTransform() }
}

extension FieldTransform where Self == StringTransform {
    /// Any value as a `String`, else `""`: ApiModel's `StringTransform()`.
    public static var string: StringTransform { StringTransform() }
}

extension FieldTransform where Self == BoolTransform {
    /// Any value as a `Bool`, else `false`: ApiModel's `BoolTransform()`.
    public static var bool: BoolTransform { BoolTransform() }
}

extension FieldTransform where Self == DateTransform {
    /// ISO 8601 dates, with or without fractional seconds (`"2015-12-30T12:12:33.000Z"`):
    /// ApiModel's `NSDateTransform()`. A string that is no date fails the field, and
    /// ``ResourceModel/shouldFail(withInvalidValue:forProperty:)`` returning `false` reads it as
    /// `nil` instead, as ApiModel does.
    public static var date: DateTransform { DateTransform(formats: [.iso8601WithFractionalSeconds, .iso8601]) }
}
