public import Foundation

/// The MessagePack timestamp extension (type −1): seconds since 1970 and nanoseconds, with the
/// full range of the 96-bit form (years far beyond `Date`'s precision).
public struct MessagePackTimestamp: Sendable, Hashable, CustomStringConvertible {
    /// Whole seconds since 1970-01-01T00:00:00Z; negative before it.
    public var seconds: Int64
    /// Nanoseconds added to ``seconds``, in `0..<1_000_000_000`.
    public var nanoseconds: UInt32

    /// Creates a timestamp.
    ///
    /// - Precondition: `nanoseconds < 1_000_000_000`; larger values are reduced into seconds.
    public init(seconds: Int64, nanoseconds: UInt32 = 0) {
        let carry = Int64(nanoseconds / 1_000_000_000)
        self.seconds = seconds &+ carry
        self.nanoseconds = nanoseconds % 1_000_000_000
    }

    /// The timestamp closest to a date, rounded to the nanosecond.
    public init(_ date: Date) {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite else {
            self.init(seconds: interval < 0 ? .min : .max)
            return
        }
        var seconds = interval.rounded(.down)
        var nanoseconds = ((interval - seconds) * 1_000_000_000).rounded()
        if nanoseconds >= 1_000_000_000 {
            seconds += 1
            nanoseconds -= 1_000_000_000
        }
        self.init(seconds: Int64(exactly: seconds) ?? (seconds < 0 ? .min : .max), nanoseconds: UInt32(nanoseconds))
    }

    /// The date, to `Date`'s precision.
    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1_000_000_000)
    }

    /// ``iso8601``.
    public var description: String { iso8601 }

    /// The timestamp as ISO 8601 in UTC, with all nine fractional digits when there are
    /// nanoseconds: `2026-11-22T05:27:55.000000123Z`. Computed from the integers, so nothing is
    /// lost to floating point.
    public var iso8601: String {
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (day, second) = secondOfDay < 0 ? (days - 1, secondOfDay + 86_400) : (days, secondOfDay)
        let (year, month, dayOfMonth) = ISO8601Parser.civilFromDays(day)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = (year < 0 ? "-" : "") + pad(year, 4) + "-" + pad(month, 2) + "-" + pad(dayOfMonth, 2)
        text += "T" + pad(second / 3600, 2) + ":" + pad(second % 3600 / 60, 2) + ":" + pad(second % 60, 2)
        if nanoseconds > 0 { text += "." + pad(Int64(nanoseconds), 9) }
        return text + "Z"
    }

    /// The smallest of the three encodings that holds this value: 4, 8 or 12 bytes of payload.
    var payload: [UInt8] {
        if seconds >= 0, seconds >> 34 == 0 {
            let seconds = UInt64(seconds)
            if nanoseconds == 0, seconds <= UInt64(UInt32.max) {
                return MessagePackWriter.bigEndian(UInt32(seconds))
            }
            return MessagePackWriter.bigEndian(UInt64(nanoseconds) << 34 | seconds)
        }
        return MessagePackWriter.bigEndian(nanoseconds) + MessagePackWriter.bigEndian(UInt64(bitPattern: seconds))
    }

    /// Reads one of the three encodings.
    static func read(_ payload: UnsafeRawBufferPointer) -> MessagePackTimestamp? {
        switch payload.count {
        case 4:
            return MessagePackTimestamp(seconds: Int64(payload.loadUnaligned(as: UInt32.self).bigEndian))
        case 8:
            let packed = payload.loadUnaligned(as: UInt64.self).bigEndian
            let nanoseconds = UInt32(packed >> 34)
            guard nanoseconds < 1_000_000_000 else { return nil }
            return MessagePackTimestamp(seconds: Int64(packed & 0x3_FFFF_FFFF), nanoseconds: nanoseconds)
        case 12:
            let nanoseconds = payload.loadUnaligned(as: UInt32.self).bigEndian
            guard nanoseconds < 1_000_000_000 else { return nil }
            let seconds = Int64(bitPattern: payload.loadUnaligned(fromByteOffset: 4, as: UInt64.self).bigEndian)
            return MessagePackTimestamp(seconds: seconds, nanoseconds: nanoseconds)
        default:
            return nil
        }
    }
}
