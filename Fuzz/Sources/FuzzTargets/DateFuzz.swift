import Foundation

@testable import MonoRailClient

/// Dates as strings in every format and as numbers: a date inside the supported range that writes
/// back and reads again, or nothing; never a trap.
enum DateFuzz {
    static let formats: [DateFormat] = [
        .iso8601, .iso8601WithFractionalSeconds, .rails, .withoutTimeZone, .dateOnly, .custom("yyyy-MM-dd"),
        .custom("y/MM/dd HH:mm:ss Z"),
    ]

    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        for format in formats {
            guard let date = format.date(from: text) else { continue }
            check(date, from: "\"\(text)\" in \(format)")
        }
        if let date = DateFormat.defaults.date(from: text) { check(date, from: "\"\(text)\"") }
        // Eight bytes as seconds since 1970, as a JSON or MessagePack number would give them.
        if data.count >= 8 {
            let seconds = data.withUnsafeBytes { Double(bitPattern: $0.loadUnaligned(as: UInt64.self)) }
            let decoded = try? ValueDecoder().decode(Date.self, from: .double(seconds))
            if let decoded { check(decoded, from: "\(seconds) seconds") }
            if (DateFormat.date(secondsSince1970: seconds) != nil) != (decoded != nil) {
                fatalError("the decoder and the range disagree on \(seconds)")
            }
            // Formatting is total, even outside the range.
            for format in formats.prefix(5) { _ = format.string(from: Date(timeIntervalSince1970: seconds)) }
            let timestamp = data.withUnsafeBytes {
                MessagePackTimestamp(
                    seconds: $0.loadUnaligned(as: Int64.self), nanoseconds: UInt32(data[0]) * 3_000_000)
            }
            _ = timestamp.iso8601
        }
    }

    static func check(_ date: Date, from source: String) {
        guard DateFormat.supportedRange.contains(date) else { fatalError("\(source) read as a date out of range") }
        // The first four write the instant; a date alone writes its UTC day, read back as its midnight.
        for format in formats.prefix(4) {
            let written = format.string(from: date)
            guard let again = format.date(from: written) else { fatalError("\(source) wrote \(written), unreadable") }
            if abs(again.timeIntervalSince(date)) >= 1 { fatalError("\(source) wrote \(written), read differently") }
        }
        let day = DateFormat.dateOnly.string(from: date)
        guard let midnight = DateFormat.dateOnly.date(from: day), midnight <= date.addingTimeInterval(0.001),
            date.timeIntervalSince(midnight) < 86_400
        else { fatalError("\(source) wrote the day \(day), read as another") }
        do {
            _ = try ValueEncoder().encode(["at": date])
        } catch {
            fatalError("\(source) decoded but does not encode: \(error)")
        }
    }
}
