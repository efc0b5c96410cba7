public import Foundation

/// A MessagePack value with everything the format can carry: both integer families, both float
/// widths, binary data, maps with keys of any type in their original order, timestamps and
/// application extensions.
///
/// ``MessagePackReader`` produces it and ``MessagePackWriter`` writes it back; the Codable
/// ``MessagePackEncoder`` and ``MessagePackDecoder`` go through it.
///
/// ```swift
/// let value: MessagePackValue = ["company": "MonoRail Co.", "cars": 5, "photo": .binary(jpeg)]
/// let bytes = MessagePackWriter.serialize(value)
/// ```
public enum MessagePackValue: Sendable, Hashable {
    /// `nil` (0xc0).
    case `nil`
    /// `true` or `false`.
    case bool(Bool)
    /// A signed integer: the negative fixint and `int 8/16/32/64` forms.
    case int(Int64)
    /// An unsigned integer: the positive fixint and `uint 8/16/32/64` forms.
    case uint(UInt64)
    /// A `float 32`.
    case float(Float)
    /// A `float 64`.
    case double(Double)
    /// A UTF-8 string.
    case string(String)
    /// Bytes (`bin 8/16/32`).
    case binary(Data)
    /// An array.
    case array([MessagePackValue])
    /// A map, its pairs in the order they were read or built. Keys may be any value.
    case map([MessagePackPair])
    /// The timestamp extension (type −1).
    case timestamp(MessagePackTimestamp)
    /// Any other extension type, kept as its type code and payload.
    case `extension`(type: Int8, data: Data)
}

/// One key and value of a MessagePack map.
public struct MessagePackPair: Sendable, Hashable {
    /// The key.
    public var key: MessagePackValue
    /// The value.
    public var value: MessagePackValue

    /// Creates a pair.
    public init(_ key: MessagePackValue, _ value: MessagePackValue) {
        self.key = key
        self.value = value
    }
}

// MARK: - Accessors

extension MessagePackValue {
    /// The value of the first pair whose key is the string `key`, when this is a map.
    public subscript(key: String) -> MessagePackValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .string(key) }?.value
    }

    /// The element at `index` when this is an array and the index is in range.
    public subscript(index: Int) -> MessagePackValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The integer, when this is an integer that fits `Int64`.
    public var int64Value: Int64? {
        switch self {
        case .int(let value): value
        case .uint(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

// MARK: - Literals

extension MessagePackValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil`.
    public init(nilLiteral: ()) { self = .nil }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer. Non-negative literals are unsigned, as every MessagePack implementation writes them.
    public init(integerLiteral value: Int64) { self = value < 0 ? .int(value) : .uint(UInt64(value)) }
    /// A `float 64`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: MessagePackValue...) { self = .array(elements) }
    /// A map, its pairs in the literal's order.
    public init(dictionaryLiteral elements: (MessagePackValue, MessagePackValue)...) {
        self = .map(elements.map { MessagePackPair($0.0, $0.1) })
    }
}
