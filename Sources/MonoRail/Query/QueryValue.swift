import Foundation

/// How a live query compares field values with the values of its conditions and with each other,
/// close to how a SQL server does: numbers by value across integers and floating point, Booleans as
/// `0` and `1`, strings by Unicode scalars (SQLite's binary collation), `null` before everything.
///
/// A server with another collation (case-insensitive, locale-aware) may order strings differently;
/// its answer then decides membership and order until the next local change.
enum QueryValue {
    /// The order of two values, or `nil` when they cannot be compared.
    static func compare(_ lhs: JSONValue, _ rhs: JSONValue) -> ComparisonResult? {
        // The common cases first: a sort compares the same kind of value many times.
        if case .double(let a) = lhs, case .double(let b) = rhs, !a.isNaN, !b.isNaN {
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
        if case .int(let a) = lhs, case .int(let b) = rhs {
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let a), .string(let b)): return order(a.unicodeScalars, b.unicodeScalars)
        case (.string(let text), _):
            return number(fromText: text).flatMap { compare($0, rhs) }
        case (_, .string(let text)):
            return number(fromText: text).flatMap { compare(lhs, $0) }
        case (.array, _), (_, .array), (.object, _), (_, .object):
            return lhs == rhs ? .orderedSame : nil
        default:
            guard let a = number(lhs), let b = number(rhs) else { return nil }
            return a.compare(b)
        }
    }

    /// The order of two values for sorting: ``compare(_:_:)``, and by kind where it has none
    /// (numbers, then strings, then arrays and objects), so every pair has an order.
    static func sortOrder(_ lhs: JSONValue, _ rhs: JSONValue) -> ComparisonResult {
        if let order = compare(lhs, rhs) { return order }
        let (a, b) = (rank(lhs), rank(rhs))
        return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
    }

    private static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .null: 0
        case .bool, .int, .uint, .double: 1
        case .string: 2
        case .array: 3
        case .object: 4
        }
    }

    /// A number as compared: exact for integers, so large ids do not round.
    private enum Number {
        case integer(Int64)
        case unsigned(UInt64)
        case real(Double)

        func compare(_ other: Number) -> ComparisonResult {
            switch (self, other) {
            case (.integer(let a), .integer(let b)):
                return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
            case (.unsigned(let a), .unsigned(let b)):
                return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
            case (.integer(let a), .unsigned):
                return a < 0 ? .orderedAscending : Number.unsigned(UInt64(a)).compare(other)
            case (.unsigned, .integer(let b)): return b < 0 ? .orderedDescending : compare(.unsigned(UInt64(b)))
            default:
                let (a, b) = (real, other.real)
                return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
            }
        }

        var real: Double {
            switch self {
            case .integer(let value): Double(value)
            case .unsigned(let value): Double(value)
            case .real(let value): value
            }
        }
    }

    private static func number(_ value: JSONValue) -> Number? {
        switch value {
        case .bool(let flag): .integer(flag ? 1 : 0)
        case .int(let value): .integer(value)
        case .uint(let value): .unsigned(value)
        case .double(let value): value.isNaN ? nil : .real(value)
        default: nil
        }
    }

    /// Text that stands for a number or a Boolean, as a query parameter carries one.
    private static func number(fromText text: String) -> JSONValue? {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default:
            if let integer = Int64(text) { return .int(integer) }
            if let unsigned = UInt64(text) { return .uint(unsigned) }
            if let real = Double(text), real.isFinite { return .double(real) }
            return nil
        }
    }

    private static func order(_ a: String.UnicodeScalarView, _ b: String.UnicodeScalarView) -> ComparisonResult {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let x?, let y?):
                if x.value != y.value { return x.value < y.value ? .orderedAscending : .orderedDescending }
            }
        }
    }
}
