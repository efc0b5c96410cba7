import Foundation

/// What a live query asks of one key of a record: a value, one of several values, or a range.
///
/// Literals are equality and arrays are `IN`, so a filter reads as it does in
/// ``ResourceModel/get(where:include:policy:in:)``:
///
/// ```swift
/// let fast = try await Train.query(where: [
///     "company": ["MonoRail Co.", "Deutsche Bahn AG"],   // IN
///     "max_speed": .atLeast(100),                        // >= 100
///     "in_service": true,                                // ==
/// ])
/// ```
///
/// A query sends its conditions as the conventions' ``ServerConventions/filterStyle`` writes them and
/// evaluates them itself on the instances it holds, so it stays true as records change.
public enum QueryCondition: Sendable, Hashable {
    /// The value equals this one. Numbers compare by value (`1` equals `1.0`); a string and a number
    /// compare as numbers when the string is one, as query parameters travel as text.
    case equals(JSONValue)
    /// The value equals one of these (SQL's `IN`).
    case isIn([JSONValue])
    /// The value lies in a range; a missing bound is open.
    case range(lower: Bound?, upper: Bound?)

    /// One end of a ``range(lower:upper:)``.
    public struct Bound: Sendable, Hashable {
        /// The value at the end.
        public var value: JSONValue
        /// Whether the end itself is in the range.
        public var isIncluded: Bool

        /// Creates a bound.
        public init(_ value: JSONValue, isIncluded: Bool) {
            self.value = value
            self.isIncluded = isIncluded
        }
    }

    /// `>= value`.
    public static func atLeast(_ value: JSONValue) -> QueryCondition {
        .range(lower: Bound(value, isIncluded: true), upper: nil)
    }

    /// `> value`.
    public static func greaterThan(_ value: JSONValue) -> QueryCondition {
        .range(lower: Bound(value, isIncluded: false), upper: nil)
    }

    /// `<= value`.
    public static func atMost(_ value: JSONValue) -> QueryCondition {
        .range(lower: nil, upper: Bound(value, isIncluded: true))
    }

    /// `< value`.
    public static func lessThan(_ value: JSONValue) -> QueryCondition {
        .range(lower: nil, upper: Bound(value, isIncluded: false))
    }

    /// `>= lower` and `<= upper`.
    public static func between(_ lower: JSONValue, _ upper: JSONValue) -> QueryCondition {
        .range(lower: Bound(lower, isIncluded: true), upper: Bound(upper, isIncluded: true))
    }
}

extension QueryCondition: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral
{
    /// Equality with a string.
    public init(stringLiteral value: String) { self = .equals(.string(value)) }
    /// Equality with an integer.
    public init(integerLiteral value: Int64) { self = .equals(.int(value)) }
    /// Equality with a number.
    public init(floatLiteral value: Double) { self = .equals(.double(value)) }
    /// Equality with a Boolean.
    public init(booleanLiteral value: Bool) { self = .equals(.bool(value)) }
    /// The value is `null`.
    public init(nilLiteral: ()) { self = .equals(.null) }
    /// The value is one of these.
    public init(arrayLiteral elements: JSONValue...) { self = .isIn(elements) }
}

extension QueryCondition {
    /// Whether `value` meets the condition; `nil` when the two cannot be compared (a string against
    /// a number that is not one, an array against a range), which the query treats as unknown.
    func isMet(by value: JSONValue) -> Bool? {
        switch self {
        case .equals(let expected):
            return QueryValue.compare(value, expected).map { $0 == .orderedSame }
        case .isIn(let candidates):
            var unknown = false
            for candidate in candidates {
                switch QueryValue.compare(value, candidate) {
                case .orderedSame?: return true
                case nil: unknown = true
                default: continue
                }
            }
            return unknown ? nil : false
        case .range(let lower, let upper):
            // SQL: a comparison with NULL is never true.
            if value == .null { return false }
            if let lower {
                guard let order = QueryValue.compare(value, lower.value) else { return nil }
                if order == .orderedAscending || (order == .orderedSame && !lower.isIncluded) { return false }
            }
            if let upper {
                guard let order = QueryValue.compare(value, upper.value) else { return nil }
                if order == .orderedDescending || (order == .orderedSame && !upper.isIncluded) { return false }
            }
            return true
        }
    }
}
