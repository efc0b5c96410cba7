import Foundation

/// A fast, allocation-free reader and writer for the ISO 8601 profile APIs use:
/// `YYYY-MM-DD[THH:MM:SS[.fraction][Z|±HH:MM|±HHMM|±HH]]`.
enum ISO8601Parser {
    enum OffsetStyle { case zulu, colon, compact, hoursOnly }

    struct Parsed {
        var date: Date
        /// Whether a time of day followed the date; a date alone is read as its midnight in UTC.
        var hasTime: Bool
        var fractionDigits: Int
        /// How the offset from UTC was written, or `nil` when there was none (read as UTC).
        var offsetStyle: OffsetStyle?
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Parsed? {
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                index += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        if index == bytes.count {
            return Parsed(
                date: Date(timeIntervalSince1970: Double(days * 86_400)), hasTime: false, fractionDigits: 0,
                offsetStyle: nil)
        }
        guard bytes[index] == 0x54 || bytes[index] == 0x74 || bytes[index] == 0x20 else { return nil }
        index += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A), let second = digits(2) else {
            return nil
        }
        guard hour < 24, minute < 60, second < 61 else { return nil }
        var fraction = 0.0
        var fractionDigits = 0
        if expect(0x2E) {
            var scale = 0.1
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
        }
        var offsetSeconds = 0
        let style: OffsetStyle?
        switch index < bytes.count ? bytes[index] : nil {
        case nil:
            style = nil
        case 0x5A, 0x7A:
            index += 1
            style = .zulu
        case 0x2B, 0x2D:
            let sign = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = digits(2), hours < 24 else { return nil }
            var minutes = 0
            if index == bytes.count {
                style = .hoursOnly
            } else if expect(0x3A) {
                guard let value = digits(2) else { return nil }
                minutes = value
                style = .colon
            } else {
                guard let value = digits(2) else { return nil }
                minutes = value
                style = .compact
            }
            guard minutes < 60 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Parsed(
            date: Date(timeIntervalSince1970: Double(seconds) + fraction), hasTime: true,
            fractionDigits: fractionDigits,
            offsetStyle: style)
    }

    /// Writes `date`, clamped into ``DateFormat/supportedRange``: decoders never produce a date
    /// outside it and encoders refuse one, so clamping only keeps a direct
    /// ``DateFormat/string(from:)`` from trapping on an infinite or far-off date.
    static func format(_ date: Date, milliseconds: Bool, offset: WrittenOffset) -> String {
        let lowest = DateFormat.supportedRange.lowerBound.timeIntervalSince1970
        let end = Int(DateFormat.supportedRange.upperBound.timeIntervalSince1970)
        // Written so that NaN takes the lower bound.
        let interval = date.timeIntervalSince1970 >= lowest ? date.timeIntervalSince1970 : lowest
        var seconds = end - 1
        var millis = 999
        if interval < Double(end) {
            seconds = Int(interval.rounded(.down))
            millis = Int(((interval - Double(seconds)) * 1000).rounded())
            if millis == 1000 {
                seconds += 1
                millis = 0
            }
            if seconds >= end { (seconds, millis) = (end - 1, 999) }
            // A date alone is the day the instant falls in, not the one its rounded milliseconds reach.
            if offset == .dateOnly { seconds = Int(interval.rounded(.down)) }
        }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        if offset == .dateOnly { return text }
        text += "T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2))"
        if milliseconds { text += ".\(pad(millis, 3))" }
        switch offset {
        case .zulu: text += "Z"
        case .compact: text += "+0000"
        case .none, .dateOnly: break
        }
        return text
    }

    /// What follows the seconds when a date is written: `Z`, Rails' `+0000`, nothing (a date-time
    /// without an offset, in UTC), or no time at all.
    enum WrittenOffset { case zulu, compact, none, dateOnly }

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days: exact proleptic Gregorian arithmetic.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian year, month and day of a count of days since 1970-01-01; exact for
    /// any day count the integer type holds, so `Int64` serves the whole range of timestamps.
    static func civilFromDays<Count: FixedWidthInteger & SignedInteger>(_ days: Count) -> (
        year: Count, month: Count, day: Count
    ) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
