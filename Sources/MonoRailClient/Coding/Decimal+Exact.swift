package import Foundation

extension Decimal {
    /// The decimal a whole string spells, or `nil`.
    ///
    /// Foundation's `Decimal(string:)` reads the longest prefix that is a number, so `"12abc"` is 12 and
    /// `"-"` is 0; this accepts only an optional sign, digits, an optional fraction and an optional
    /// exponent, and nothing around them. Out-of-range values (beyond about 10¹²⁷) are `nil`.
    package init?(exactly text: some StringProtocol) {
        var utf8 = Substring(text).utf8[...]
        if utf8.first == UInt8(ascii: "-") || utf8.first == UInt8(ascii: "+") { utf8 = utf8.dropFirst() }
        func digits() -> Int {
            let count = utf8.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            utf8 = utf8.dropFirst(count)
            return count
        }
        var significant = digits()
        if utf8.first == UInt8(ascii: ".") {
            utf8 = utf8.dropFirst()
            significant += digits()
        }
        guard significant > 0 else { return nil }
        if utf8.first == UInt8(ascii: "e") || utf8.first == UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            if utf8.first == UInt8(ascii: "-") || utf8.first == UInt8(ascii: "+") { utf8 = utf8.dropFirst() }
            guard digits() > 0 else { return nil }
        }
        guard utf8.isEmpty, let decimal = Decimal(string: String(text), locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        self = decimal
    }
}
