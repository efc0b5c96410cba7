import Foundation

/// A record's version as the server writes it — `updated_at`, `lock_version`
/// (``ServerConventions/versionKey``) — which decides which of two states of a record is the newer,
/// whatever order they arrived in: a push, a read that raced it, the answer to a save.
enum RecordVersion: Sendable, Hashable {
    case integer(Int64)
    case number(Double)
    /// A timestamp or another text; at most 64 bytes are kept, longer ones are no version.
    case text(String)

    init?(_ value: JSONValue) {
        switch value {
        case .int(let int): self = .integer(int)
        case .uint(let uint): self = .integer(Int64(clamping: uint))
        case .double(let double) where double.isFinite: self = .number(double)
        case .string(let text) where !text.isEmpty && text.utf8.count <= 64: self = .text(text)
        default: return nil
        }
    }

    /// Whether this version is older than `other`; `nil` when the two cannot be compared (a number
    /// and a text, two texts that are not timestamps of one form): then arrival order decides.
    func isOlder(than other: RecordVersion) -> Bool? {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): return a < b
        case (.integer(let a), .number(let b)): return Double(a) < b
        case (.number(let a), .integer(let b)): return a < Double(b)
        case (.number(let a), .number(let b)): return a < b
        case (.text(let a), .text(let b)):
            if a == b { return false }
            // `"9"` and `"10"`: a counter sent as text is still a counter.
            if let first = Int64(a), let second = Int64(b) { return first < second }
            // Timestamps written alike in one zone (`2026-11-27T07:06:05.673Z`): digit for digit, the
            // text order is the time order, with no date to parse. Local times with offsets are not:
            // across a fall-back, `02:30+02:00` comes before `02:10+01:00`.
            if Self.haveOneForm(a, b), Self.offset(of: a) == Self.offset(of: b) {
                return a.utf8.lexicographicallyPrecedes(b.utf8)
            }
            guard let first = Self.date(a), let second = Self.date(b) else { return nil }
            return first < second
        default:
            return nil
        }
    }

    /// Whether the two texts have digits in the same places and the same characters elsewhere.
    private static func haveOneForm(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        for (x, y) in zip(a.utf8, b.utf8) {
            let xIsDigit = (0x30...0x39).contains(x)
            if xIsDigit != (0x30...0x39).contains(y) { return false }
            if !xIsDigit, x != y { return false }
        }
        return true
    }

    /// The zone a timestamp names at its end: `Z`, `+02:00`, `-0500`, `+02`; empty for none.
    private static func offset(of text: String) -> Substring {
        if text.hasSuffix("Z") || text.hasSuffix("z") { return text.suffix(1) }
        for length in [6, 5, 3] where text.utf8.count > length {
            let suffix = text.suffix(length)
            if suffix.first == "+" || suffix.first == "-" { return suffix }
        }
        return ""
    }

    private static func date(_ text: String) -> Date? {
        for format in DateFormat.defaults {
            if let date = format.date(from: text) { return date }
        }
        return nil
    }
}
