package import Foundation

/// Reads the HTTP date servers send in `Date`, `Last-Modified` and `Expires`: the IMF-fixdate of
/// RFC 9110 §5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// Read by hand: a `DateFormatter` costs tens of microseconds per date on Linux, more than the
/// rest of a small response. The two obsolete forms (RFC 850 and asctime) are not read; no
/// current server sends them, and a date that does not parse is `nil`, never an error.
package enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// The date an IMF-fixdate spells, or `nil`.
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, separators at fixed places.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "),
            bytes[7] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "),
            bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == UInt8(ascii: " "),
            bytes[26...] == Array("GMT".utf8)[...],
            days.contains(String(decoding: bytes[0..<3], as: UTF8.self)),
            let monthIndex = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let dayCount = ISO8601Parser.daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: Double(dayCount * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// The IMF-fixdate of a date, to the second (rounded down): `Tue, 24 Nov 2026 08:49:37 GMT`.
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let dayCount = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - dayCount * 86_400
        let (year, month, day) = ISO8601Parser.civilFromDays(dayCount)
        // 1970-01-01 was a Thursday.
        let weekday = ((dayCount % 7) + 7 + 3) % 7
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(Self.days[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
