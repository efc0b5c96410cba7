import Foundation

/// A record's id exactly as the server sent it: an integer or a string.
///
/// It is written back in the same form, so an API with string ids (`"a1b2"`) or integer ids (`1`)
/// sees what it sent. Literals of both kinds convert: `Train.get(id: 1)`, `Train.get(id: "a1b2")`.
public enum ResourceID: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, Codable
{
    /// An integer id.
    case int(Int64)
    /// A string id.
    case string(String)

    /// Creates an integer id.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Creates a string id.
    public init(stringLiteral value: String) { self = .string(value) }

    /// The id's text, as it appears in a URL path before percent-encoding.
    public var description: String {
        switch self {
        case .int(let int): String(int)
        case .string(let string): string
        }
    }

    /// The integer, when the id is one.
    public var intValue: Int? {
        if case .int(let int) = self { return Int(exactly: int) }
        return nil
    }

    /// The string, when the id is one.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// A new local id: what a record created in the outbox is known by until the server gives it
    /// its own, which then replaces it everywhere.
    public static func local() -> ResourceID {
        .string(localPrefix + UUID().uuidString.lowercased())
    }

    /// Whether this is a local id (``local()``), which the server has not seen.
    public var isLocal: Bool {
        if case .string(let string) = self { return string.hasPrefix(Self.localPrefix) }
        return false
    }

    /// Chosen so no server id is mistaken for one: a tilde and a colon never start a generated id.
    static let localPrefix = "~local:"

    /// The id as a JSON value.
    public var jsonValue: JSONValue {
        switch self {
        case .int(let int): .int(int)
        case .string(let string): .string(string)
        }
    }

    /// A reference's id: `null` is none, an integer or a non-empty string the id, read directly
    /// (through `Codable` every reference of every record looked up generic metadata); anything
    /// else is read by the coder, which raises the error it always raised.
    static func decodeOptional(_ value: JSONValue, _ coder: FieldCoder) throws -> ResourceID? {
        if value.isNull { return nil }
        if let id = direct(value, coder) { return id }
        return try coder.decode(ResourceID?.self, from: value)
    }

    /// The id `Codable` reads from `value`, when that is plain: an integer, or a non-empty string
    /// under strict coercion (lenient coercion reads `"5"` as the integer 5).
    private static func direct(_ value: JSONValue, _ coder: FieldCoder) -> ResourceID? {
        switch value {
        case .int(let int): .int(int)
        case .string(let string) where !string.isEmpty && coder.options.coercion == .strict: .string(string)
        default: nil
        }
    }

    /// A list of references' ids, as ``decodeOptional(_:_:)`` reads one; `null` is none.
    static func decodeList(_ value: JSONValue, _ coder: FieldCoder) throws -> [ResourceID] {
        switch value {
        case .null: return []
        case .array(let items):
            var ids: [ResourceID] = []
            ids.reserveCapacity(items.count)
            for item in items {
                guard let id = direct(item, coder) else { return try coder.decode([ResourceID].self, from: value) }
                ids.append(id)
            }
            return ids
        default:
            return try coder.decode([ResourceID].self, from: value)
        }
    }

    /// Reads an id from a JSON value: an integer, or a non-empty string.
    ///
    /// Returns `nil` for anything else (null, fractions, Booleans, objects), which the caller reports.
    public init?(json: JSONValue) {
        switch json {
        case .int(let int): self = .int(int)
        case .uint(let uint):
            guard let int = Int64(exactly: uint) else { return nil }
            self = .int(int)
        case .double(let double):
            guard let int = Int64(exactly: double) else { return nil }
            self = .int(int)
        case .string(let string) where !string.isEmpty: self = .string(string)
        default: return nil
        }
    }

    /// Decodes an integer or a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let int = try? container.decode(Int64.self) {
            self = .int(int)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// Encodes the id in the form it arrived in.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .int(let int): try container.encode(int)
        case .string(let string): try container.encode(string)
        }
    }
}

/// Values that name a record: `Int`, `String`, ``ResourceID`` and the other integer types.
///
/// ``ResourceModel/get(id:include:parameters:policy:in:)`` accepts any of them, so both `Train.get(id: 1)` and
/// `Train.get(id: "a1b2")` read naturally.
public protocol ResourceIDConvertible: Sendable {
    /// The id.
    var resourceID: ResourceID { get }
}

extension ResourceID: ResourceIDConvertible {
    /// The id itself.
    public var resourceID: ResourceID { self }
}

extension String: ResourceIDConvertible {
    /// The string as an id.
    public var resourceID: ResourceID { .string(self) }
}

extension Int: ResourceIDConvertible {
    /// The integer as an id.
    public var resourceID: ResourceID { .int(Int64(self)) }
}

extension Int64: ResourceIDConvertible {
    /// The integer as an id.
    public var resourceID: ResourceID { .int(self) }
}

extension Int32: ResourceIDConvertible {
    /// The integer as an id.
    public var resourceID: ResourceID { .int(Int64(self)) }
}
