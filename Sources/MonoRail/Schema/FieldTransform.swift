public import Foundation

/// Converts one field between its wire value and its Swift value (ApiModel's JSON transforms).
///
/// Use a built-in transform with `@Field(transform:)`, or write your own:
///
/// ```swift
/// struct CentsTransform: FieldTransform {
///     func decode(_ value: JSONValue) throws -> Decimal {
///         guard let cents = value.intValue else { throw FieldTransformError("expected cents") }
///         return Decimal(cents) / 100
///     }
///     func encode(_ value: Decimal) throws -> JSONValue {
///         .int(Int64(truncating: (value * 100) as NSDecimalNumber))
///     }
/// }
///
/// @Resource final class Ticket {
///     @Field(transform: CentsTransform()) var price: Decimal = 0
/// }
/// ```
///
/// A transform sees only non-null values: `null` becomes `nil` for optional fields before the transform
/// runs, and `nil` is sent as `null`.
public protocol FieldTransform<Value>: Sendable {
    /// The Swift type of the field (without optionality).
    associatedtype Value: Sendable

    /// Reads a wire value.
    ///
    /// - Throws: Any error; it is reported as a decoding failure naming the model, field and path.
    func decode(_ value: JSONValue) throws -> Value

    /// Writes a value for the wire.
    ///
    /// - Throws: Any error; it is reported as an encoding failure.
    func encode(_ value: Value) throws -> JSONValue
}

/// The error a transform throws for a value it cannot read.
public struct FieldTransformError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var description: String

    /// Creates an error with a message.
    public init(_ description: String) { self.description = description }
}

/// Reads percentages as fractions: `50` on the wire is `0.5` in Swift, and back.
public struct PercentageTransform: FieldTransform {
    /// Creates the transform.
    public init() {}

    /// Divides the wire number by 100; numeric strings such as `"50"` or `"50%"` are accepted.
    public func decode(_ value: JSONValue) throws -> Double {
        if let number = value.doubleValue { return number / 100 }
        if let string = value.stringValue {
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            let digits = trimmed.hasSuffix("%") ? String(trimmed.dropLast()) : trimmed
            if let number = Double(digits), number.isFinite { return number / 100 }
        }
        throw FieldTransformError("expected a percentage, found \(value)")
    }

    /// Multiplies by 100.
    public func encode(_ value: Double) throws -> JSONValue {
        let percent = value * 100
        guard percent.isFinite else { throw FieldTransformError("\(value) is not a finite percentage") }
        return .double(percent)
    }
}

/// Reads dates in given formats, tried in order, and writes them in the first.
public struct DateTransform: FieldTransform {
    /// The formats, in the order they are tried.
    public var formats: [DateFormat]

    /// Creates the transform.
    public init(formats: [DateFormat]) { self.formats = formats }

    /// Parses a string in the first format that matches; numbers are seconds since 1970.
    public func decode(_ value: JSONValue) throws -> Date {
        if let seconds = value.doubleValue {
            guard let date = DateFormat.date(secondsSince1970: seconds) else {
                throw FieldTransformError(DateFormat.unsupportedSeconds(seconds))
            }
            return date
        }
        guard let string = value.stringValue else { throw FieldTransformError("expected a date, found \(value)") }
        if let date = formats.date(from: string) { return date }
        throw FieldTransformError(
            "the date \"\(string.prefix(60))\" matches none of: \(formats.map(\.description).joined(separator: ", "))")
    }

    /// Formats the date in the first format.
    public func encode(_ value: Date) throws -> JSONValue {
        guard DateFormat.supportedRange.contains(value) else {
            throw FieldTransformError(DateFormat.unsupportedSeconds(value.timeIntervalSince1970))
        }
        return .string((formats.first ?? .iso8601WithFractionalSeconds).string(from: value))
    }
}

/// Reads URLs, resolving relative ones against a base (for APIs that send `/images/1.png`).
public struct URLTransform: FieldTransform {
    /// The URL relative strings are resolved against; `nil` keeps them relative.
    public var base: URL?

    /// Creates the transform.
    public init(base: URL? = nil) { self.base = base }

    /// Parses the string as a URL.
    public func decode(_ value: JSONValue) throws -> URL {
        guard let string = value.stringValue, !string.isEmpty, let url = URL(string: string, relativeTo: base)
        else { throw FieldTransformError("expected a URL, found \(value)") }
        return url.absoluteURL
    }

    /// Writes the absolute URL string.
    public func encode(_ value: URL) throws -> JSONValue { .string(value.absoluteString) }
}

extension FieldTransform where Self == PercentageTransform {
    /// `50` on the wire is `0.5` in Swift.
    public static var percentage: PercentageTransform { PercentageTransform() }
}

extension FieldTransform where Self == DateTransform {
    /// Dates in a custom pattern, such as `"y/MM/dd HH:mm:ss Z"`.
    public static func date(format: String) -> DateTransform { DateTransform(formats: [.custom(format)]) }

    /// Dates in any of several formats, tried in order.
    public static func date(formats: [DateFormat]) -> DateTransform { DateTransform(formats: formats) }

    /// A calendar date, written as `1968-11-01` (OpenAPI's `format: date`); read from a date alone or
    /// any default format.
    ///
    /// ```swift
    /// @Field(transform: .dateOnly) var published: Date?
    /// ```
    public static var dateOnly: DateTransform {
        DateTransform(formats: [.dateOnly] + DateFormat.defaults.filter { $0 != .dateOnly })
    }
}

extension FieldTransform where Self == URLTransform {
    /// URLs, absolute or relative to `base`.
    public static func url(relativeTo base: URL? = nil) -> URLTransform { URLTransform(base: base) }
}
