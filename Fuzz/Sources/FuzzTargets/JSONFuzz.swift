import Foundation

@testable import MonoRailClient

/// The JSON parser against Foundation's `JSONSerialization`: both accept or both refuse, and what
/// both accept holds the same values. And the cursor's check that builds nothing
/// (`JSONCursor.skipValue`) against the parser: the same texts accepted.
///
/// Foundation's known differences, allowed here:
/// - It reads UTF-16 and UTF-32 (found by their zero bytes or a byte-order mark) and a UTF-8
///   byte-order mark; MonoRail reads UTF-8 without a mark, as RFC 8259 §8.1 requires of a sender.
/// - It reads numbers beyond `Double`'s range as `Decimal` or rounds them; MonoRail refuses a
///   number whose nearest `Double` is infinite.
/// - It nests at most 512 levels; MonoRail's limit is its configured maximum depth.
/// - Of repeated keys it may keep either; MonoRail keeps the last, so such objects are not compared.
/// - It accepts a trailing comma in an array or object (`[2,]`); RFC 8259 does not, nor does MonoRail.
/// - It reads integers beyond 64 bits through `Decimal`, keeping 38 significant digits, so its
///   `Double` can be a few units in the last place from the correctly rounded one MonoRail reads:
///   numbers are compared to 1e-12 relative.
enum JSONFuzz {
    static func run(_ data: Data) {
        var ours: Result<JSONValue, JSONSyntaxError> = .failure(JSONSyntaxError(offset: 0, reason: ""))
        MemoryBound.check(inputSize: data.count) {
            ours = Result { () throws(JSONSyntaxError) in try JSONParser().parse(data) }
        }
        let skipped = data.withUnsafeBytes { raw in
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self), maxDepth: JSONParser().maxDepth)
            cursor.skipWhitespace()
            guard (try? cursor.skipValue(depth: 0)) != nil else { return false }
            cursor.skipWhitespace()
            return cursor.isAtEnd
        }
        if case .success = ours, !skipped { fatalError("the cursor refused what the parser read") }
        if case .failure = ours, skipped { fatalError("the cursor accepted what the parser refused") }
        let theirs = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        switch (ours, theirs) {
        case (.success(let value), let object?):
            guard let difference = difference(value, object, path: "$") else { return }
            fatalError("the parsers disagree at \(difference)")
        case (.failure, nil):
            return
        case (.failure(let error), _?):
            let structure = structure(data)
            if isOtherEncoding(data) || error.reason.contains("out of range") || structure.nesting >= 500
                || structure.trailingComma
            {
                return
            }
            fatalError("MonoRail refused what JSONSerialization read: \(error)")
        case (.success, nil):
            if structure(data).nesting >= 500 { return }
            fatalError("MonoRail read what JSONSerialization refused")
        }
    }

    /// UTF-16 or UTF-32 (zero bytes among the first four) or a byte-order mark.
    static func isOtherEncoding(_ data: Data) -> Bool {
        let bytes = [UInt8](data.prefix(4))
        return bytes.contains(0) || bytes.starts(with: [0xEF, 0xBB, 0xBF]) || bytes.starts(with: [0xFE, 0xFF])
            || bytes.starts(with: [0xFF, 0xFE])
    }

    /// What the bytes outside strings show: the deepest bracket nesting, and whether a comma is
    /// followed, past whitespace, by `]` or `}`.
    static func structure(_ data: Data) -> (nesting: Int, trailingComma: Bool) {
        var depth = 0
        var deepest = 0
        var trailingComma = false
        var afterComma = false
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                trailingComma = trailingComma || afterComma
            default: break
            }
            afterComma = byte == UInt8(ascii: ",")
        }
        return (deepest, trailingComma)
    }

    /// Where `value` and Foundation's `object` differ, or `nil`.
    static func difference(_ value: JSONValue, _ object: Any, path: String) -> String? {
        switch value {
        case .null:
            return object is NSNull ? nil : path
        case .bool(let bool):
            guard let other = object as? Bool, other == bool else { return path }
            return nil
        case .int, .uint, .double:
            guard let number = object as? NSNumber, let double = value.doubleValue else { return path }
            if case .int(let int) = value, let exact = Int64(exactly: number.doubleValue), int.magnitude < 1 << 53 {
                return exact == int ? nil : path
            }
            // Beyond 2^53 Foundation's Double and ours may round the digits differently.
            let theirs = number.doubleValue
            return theirs == double || abs(theirs - double) <= abs(double) * 1e-12 ? nil : path
        case .string(let string):
            guard let other = object as? String, other == string else { return path }
            return nil
        case .array(let array):
            guard let other = object as? [Any], other.count == array.count else { return path }
            for (index, element) in array.enumerated() {
                if let found = difference(element, other[index], path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let members):
            guard let other = object as? [String: Any] else { return path }
            // With a repeated key the counts differ only if Foundation kept both; compare the members both have.
            for (key, member) in members {
                guard let otherMember = other[key] else { return "\(path).\(key)" }
                if let found = difference(member, otherMember, path: "\(path).\(key)") { return found }
            }
            return nil
        }
    }
}
