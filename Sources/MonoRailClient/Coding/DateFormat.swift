public import Foundation
import MonoRailTransport

/// A date format tried when decoding, or used when encoding.
///
/// Decoding tries ``CodingOptions/dateFormats`` in order and takes the first that parses. The ISO 8601
/// formats use a hand-written parser (about 50 ns a date), because `ISO8601DateFormatter` measured
/// 29–45 µs a date on Linux. Numbers are read as seconds since 1970.
public struct DateFormat: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case iso8601(fraction: FractionRule)
        case rails
        case dateOnly
        case withoutTimeZone
        case pattern(String)
    }

    enum FractionRule: Hashable, Sendable { case forbidden, required }

    let kind: Kind

    /// `2015-12-30T12:12:33Z` or with an offset, `2015-12-30T12:12:33+01:00`; no fractional seconds.
    public static let iso8601 = DateFormat(kind: .iso8601(fraction: .forbidden))
    /// `2015-12-30T12:12:33.123Z` or with an offset; fractional seconds required.
    public static let iso8601WithFractionalSeconds = DateFormat(kind: .iso8601(fraction: .required))
    /// Rails' `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, for example `2015-12-30T18:12:33.000-0500`.
    public static let rails = DateFormat(kind: .rails)
    /// A calendar date alone, `1968-11-01` (OpenAPI's `format: date`, Pydantic's and Django's
    /// `date`), read as its midnight in UTC and written as the UTC day.
    public static let dateOnly = DateFormat(kind: .dateOnly)
    /// A date-time with no offset, `2015-12-30T12:12:33` or `2015-12-30T12:12:33.123456`, as
    /// Pydantic and Django write a naive `datetime`: read as UTC, since nothing says otherwise, and
    /// written in UTC with milliseconds and without an offset.
    public static let withoutTimeZone = DateFormat(kind: .withoutTimeZone)

    /// A Unicode date pattern such as `"yyyy-MM-dd"`, read in UTC with the POSIX locale.
    public static func custom(_ pattern: String) -> DateFormat {
        DateFormat(kind: .pattern(pattern))
    }

    /// The formats tried by default, in order: ISO 8601 with and without fractional seconds, Rails',
    /// a date alone and a date-time without an offset.
    public static let defaults: [DateFormat] = [
        .iso8601WithFractionalSeconds, .iso8601, .rails, .dateOnly, .withoutTimeZone,
    ]

    /// The dates MonoRail reads and writes: from 0000-01-01T00:00:00Z up to, not including,
    /// 10000-01-01T00:00:00Z — the years a four-digit ISO 8601 year can write back.
    ///
    /// A date outside this range, as a string or as seconds since 1970, is a decoding error naming
    /// the field, so nothing is merged that a later `save()` could not send.
    public static let supportedRange: Range<Date> =
        Date(timeIntervalSince1970: -62_167_219_200)..<Date(timeIntervalSince1970: 253_402_300_800)

    /// The date `seconds` after 1970-01-01T00:00:00Z, or `nil` when that is not a finite number inside
    /// ``supportedRange``.
    package static func date(secondsSince1970 seconds: Double) -> Date? {
        guard seconds.isFinite else { return nil }
        let date = Date(timeIntervalSince1970: seconds)
        return supportedRange.contains(date) ? date : nil
    }

    /// A description of why a number is not a date, for decoding errors.
    package static func unsupportedSeconds(_ seconds: Double) -> String {
        "\(seconds) seconds since 1970 is not a date between the years 0000 and 9999"
    }

    /// The format's name or pattern.
    public var description: String {
        switch kind {
        case .iso8601(.forbidden): "ISO 8601"
        case .iso8601(.required): "ISO 8601 with fractional seconds"
        case .rails: "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        case .dateOnly: "yyyy-MM-dd"
        case .withoutTimeZone: "ISO 8601 without an offset (UTC)"
        case .pattern(let pattern): pattern
        }
    }

    /// Parses `string`, or returns `nil` when it is not in this format or the date is outside
    /// ``supportedRange``.
    public func date(from string: String) -> Date? {
        var string = string
        return string.withUTF8 { date(fromUTF8: $0) }
    }

    /// Parses valid UTF-8 text, as ``date(from:)`` parses it as a string.
    package func date(fromUTF8 text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard let date = parse(text), Self.supportedRange.contains(date) else { return nil }
        return date
    }

    private func parse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        switch kind {
        case .iso8601(let fraction):
            guard let parsed = ISO8601Parser.parse(bytes: text), parsed.offsetStyle != nil,
                (parsed.fractionDigits > 0) == (fraction == .required)
            else { return nil }
            return parsed.date
        case .rails:
            guard let parsed = ISO8601Parser.parse(bytes: text), parsed.fractionDigits == 3,
                let offset = parsed.offsetStyle, offset != .colon
            else { return nil }
            return parsed.date
        case .dateOnly:
            guard let parsed = ISO8601Parser.parse(bytes: text), !parsed.hasTime else { return nil }
            return parsed.date
        case .withoutTimeZone:
            guard let parsed = ISO8601Parser.parse(bytes: text), parsed.hasTime, parsed.offsetStyle == nil else {
                return nil
            }
            return parsed.date
        case .pattern(let pattern):
            // The formatter reads the POSIX locale's ASCII names only, and Foundation's
            // DateFormatter on Linux traps on some non-ASCII text (combining marks): such text is no date.
            guard text.allSatisfy({ $0 < 0x80 }) else { return nil }
            let string = String(decoding: text, as: UTF8.self)
            return PatternFormatters.shared.withFormatter(pattern) { $0.date(from: string) }
        }
    }

    /// Formats `date` in this format, in UTC.
    public func string(from date: Date) -> String {
        switch kind {
        case .iso8601(let fraction):
            ISO8601Parser.format(date, milliseconds: fraction == .required, offset: .zulu)
        case .rails:
            ISO8601Parser.format(date, milliseconds: true, offset: .compact)
        case .dateOnly:
            ISO8601Parser.format(date, milliseconds: false, offset: .dateOnly)
        case .withoutTimeZone:
            ISO8601Parser.format(date, milliseconds: true, offset: .none)
        case .pattern(let pattern):
            PatternFormatters.shared.withFormatter(pattern) { $0.string(from: date) }
        }
    }
}

/// `DateFormatter`s for custom patterns, created once per pattern and used under a lock.
private final class PatternFormatters: Sendable {
    static let shared = PatternFormatters()
    // DateFormatter is not Sendable; every use happens inside the lock.
    private let formatters = Locked<[String: DateFormatterBox]>([:])

    private final class DateFormatterBox: @unchecked Sendable {
        // Only touched while `PatternFormatters.formatters` is locked.
        let formatter: DateFormatter
        init(_ formatter: DateFormatter) { self.formatter = formatter }
    }

    func withFormatter<T>(_ pattern: String, _ body: (DateFormatter) -> T) -> T {
        formatters.withLock { table in
            let box: DateFormatterBox
            if let existing = table[pattern] {
                box = existing
            } else {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(secondsFromGMT: 0)
                formatter.dateFormat = pattern
                box = DateFormatterBox(formatter)
                table[pattern] = box
            }
            return body(box.formatter)
        }
    }
}

extension [DateFormat] {
    /// The date the first of these formats that matches reads from `string`.
    package func date(from string: String) -> Date? {
        var string = string
        return string.withUTF8 { date(fromUTF8: $0) }
    }

    /// The date the first of these formats that matches reads from valid UTF-8 text.
    package func date(fromUTF8 text: UnsafeBufferPointer<UInt8>) -> Date? {
        for format in self {
            if let date = format.date(fromUTF8: text) { return date }
        }
        return nil
    }
}
