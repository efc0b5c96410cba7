public import Foundation

/// Encodes `Encodable` values as MessagePack.
///
/// `Date` becomes the timestamp extension, `Data` binary, `URL` and `UUID` strings, `Decimal` its
/// exact decimal text, and every integer takes its smallest form. Keys are the coding keys, mapped
/// through ``keyMapping``.
///
/// ```swift
/// struct Train: Codable { var company: String; var builtAt: Date }
/// let bytes = try MessagePackEncoder().encode(Train(company: "MonoRail Co.", builtAt: .now))
/// ```
public struct MessagePackEncoder: Sendable {
    /// How Swift names map to map keys. Default: ``KeyMapping/identity``.
    public var keyMapping: KeyMapping
    /// Values made available to `encode(to:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates an encoder.
    public init(keyMapping: KeyMapping = .identity, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.keyMapping = keyMapping
        self.userInfo = userInfo
    }

    /// Encodes a value to bytes.
    ///
    /// - Throws: `EncodingError` when a value's `encode(to:)` throws or encodes nothing.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let context = MessagePackEncodingContext(keys: WireKeyCache(keyMapping), userInfo: userInfo)
        var writer = MessagePackWriter()
        try context.node(value, path: []).write(to: &writer)
        return writer.data
    }

    /// Encodes a value to a tree.
    public func encodeTree<T: Encodable>(_ value: T) throws -> MessagePackValue {
        let context = MessagePackEncodingContext(keys: WireKeyCache(keyMapping), userInfo: userInfo)
        return try context.box(value, path: [])
    }
}

final class MessagePackEncodingContext {
    let keys: WireKeyCache
    let userInfo: [CodingUserInfoKey: any Sendable]

    init(keys: WireKeyCache, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.keys = keys
        self.userInfo = userInfo
    }

    func box<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> MessagePackValue {
        try node(value, path: path).value
    }

    /// The value as a node: scalars hold their value, containers their children, written out
    /// once at the end without building a second tree.
    func node<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> MessagePackNode {
        if let scalar = scalar(value) { return MessagePackNode(.value, scalar) }
        let encoder = MessagePackEncoderImpl(context: self, path: path)
        try value.encode(to: encoder)
        guard let node = encoder.node else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: path, debugDescription: "\(T.self) encoded no value"))
        }
        return node
    }

    private func scalar<T: Encodable>(_ value: T) -> MessagePackValue? {
        switch value {
        case let string as String: return .string(string)
        case let number as Int: return .int(Int64(number))
        case let number as Double: return .double(number)
        case let bool as Bool: return .bool(bool)
        case let date as Date: return .timestamp(MessagePackTimestamp(date))
        case let data as Data: return .binary(data)
        case let url as URL: return .string(url.absoluteString)
        case let uuid as UUID: return .string(uuid.uuidString)
        case let decimal as Decimal: return .string(decimal.description)
        case let value as MessagePackValue: return value
        default: return nil
        }
    }
}

/// A value under construction: containers keep references to their children so nested
/// containers can be filled after they are created, as `Encoder` allows.
final class MessagePackNode {
    enum Kind { case value, array, map }

    /// Mutable so that a node handed out by `superEncoder()` becomes whatever container is asked of it.
    var kind: Kind
    var scalar: MessagePackValue
    var elements: [MessagePackNode] = []
    var pairs: [(key: String, node: MessagePackNode)] = []
    /// Positions of keys, built once a map grows past a few pairs, so re-encoding a key replaces
    /// its value without making large maps quadratic.
    private var positions: [String: Int]?

    init(_ kind: Kind, _ scalar: MessagePackValue = .nil) {
        self.kind = kind
        self.scalar = scalar
    }

    /// Takes another node's content, keeping this node's place in its parent.
    func adopt(_ other: MessagePackNode) {
        kind = other.kind
        scalar = other.scalar
        elements = other.elements
        pairs = other.pairs
        positions = other.positions
    }

    func set(_ node: MessagePackNode, for key: String) {
        if pairs.count > 8, positions == nil {
            positions = Dictionary(pairs.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { $1 })
        }
        if let positions {
            if let index = positions[key] {
                pairs[index].node = node
            } else {
                self.positions?[key] = pairs.count
                pairs.append((key, node))
            }
        } else if let index = pairs.firstIndex(where: { $0.key == key }) {
            pairs[index].node = node
        } else {
            pairs.append((key, node))
        }
    }

    func write(to writer: inout MessagePackWriter) {
        switch kind {
        case .value: writer.write(scalar)
        case .array:
            writer.writeArrayHeader(count: elements.count)
            for element in elements { element.write(to: &writer) }
        case .map:
            writer.writeMapHeader(count: pairs.count)
            for pair in pairs {
                writer.write(pair.key)
                pair.node.write(to: &writer)
            }
        }
    }

    var value: MessagePackValue {
        switch kind {
        case .value: scalar
        case .array: .array(elements.map(\.value))
        case .map: .map(pairs.map { MessagePackPair(.string($0.key), $0.node.value) })
        }
    }
}

final class MessagePackEncoderImpl: Encoder {
    let context: MessagePackEncodingContext
    let codingPath: [any CodingKey]
    var node: MessagePackNode?

    init(context: MessagePackEncodingContext, path: [any CodingKey]) {
        self.context = context
        self.codingPath = path
    }

    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let node = self.node ?? MessagePackNode(.map)
        if node.kind != .map { node.kind = .map }
        self.node = node
        return KeyedEncodingContainer(
            MessagePackKeyedEncoder<Key>(context: context, node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let node = self.node ?? MessagePackNode(.array)
        if node.kind != .array { node.kind = .array }
        self.node = node
        return MessagePackUnkeyedEncoder(context: context, node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { MessagePackSingleValueEncoder(encoder: self) }
}

struct MessagePackKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let context: MessagePackEncodingContext
    let node: MessagePackNode
    let codingPath: [any CodingKey]

    private func set(_ child: MessagePackNode, for key: Key) {
        let isDictionary = context.keys.isDictionaryKey(Key.self)
        node.set(child, for: isDictionary ? key.stringValue : context.keys.wireKey(for: key.stringValue))
    }

    mutating func encodeNil(forKey key: Key) throws { set(MessagePackNode(.value), for: key) }

    // Synthesized `encode(to:)` calls these overloads for scalar properties: no generic dispatch.
    mutating func encode(_ value: String, forKey key: Key) throws {
        set(MessagePackNode(.value, .string(value)), for: key)
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(MessagePackNode(.value, .bool(value)), for: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(MessagePackNode(.value, .double(value)), for: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        set(MessagePackNode(.value, .int(Int64(value))), for: key)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(MessagePackNode(.value, .int(value)), for: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try context.node(value, path: codingPath + [key]), for: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = MessagePackNode(.map)
        set(child, for: key)
        return KeyedEncodingContainer(
            MessagePackKeyedEncoder<NestedKey>(context: context, node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = MessagePackNode(.array)
        set(child, for: key)
        return MessagePackUnkeyedEncoder(context: context, node: child, codingPath: codingPath + [key])
    }

    /// Encodes the superclass under `"super"`, which the key type itself need not have a case for.
    mutating func superEncoder() -> any Encoder {
        let encoder = MessagePackEncoderImpl(context: context, path: codingPath + [WireKey(stringValue: "super")])
        let child = MessagePackNode(.value)
        encoder.node = child
        node.set(child, for: "super")
        return encoder
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let encoder = MessagePackEncoderImpl(context: context, path: codingPath + [key])
        let child = MessagePackNode(.value)
        encoder.node = child
        set(child, for: key)
        return encoder
    }
}

struct MessagePackUnkeyedEncoder: UnkeyedEncodingContainer {
    let context: MessagePackEncodingContext
    let node: MessagePackNode
    let codingPath: [any CodingKey]

    var count: Int { node.elements.count }

    private func append(_ child: MessagePackNode) { node.elements.append(child) }

    private var nextKey: any CodingKey { WireKey(intValue: count) }

    mutating func encodeNil() throws { append(MessagePackNode(.value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try context.node(value, path: codingPath + [nextKey]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = MessagePackNode(.map)
        let path = codingPath + [nextKey]
        append(child)
        return KeyedEncodingContainer(
            MessagePackKeyedEncoder<NestedKey>(context: context, node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = MessagePackNode(.array)
        let path = codingPath + [nextKey]
        append(child)
        return MessagePackUnkeyedEncoder(context: context, node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = MessagePackEncoderImpl(context: context, path: codingPath + [nextKey])
        let child = MessagePackNode(.value)
        encoder.node = child
        append(child)
        return encoder
    }
}

struct MessagePackSingleValueEncoder: SingleValueEncodingContainer {
    let encoder: MessagePackEncoderImpl
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: MessagePackValue) { set(MessagePackNode(.value, value)) }

    /// The value's own node is adopted, so a container encoded through a single-value container is
    /// written once, not first flattened into a tree; a `superEncoder()` node keeps its place.
    private func set(_ node: MessagePackNode) {
        if let existing = encoder.node {
            existing.adopt(node)
        } else {
            encoder.node = node
        }
    }

    mutating func encodeNil() throws { set(.nil) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(.float(value)) }
    mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.int(value)) }
    mutating func encode(_ value: UInt) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { set(.uint(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        set(try encoder.context.node(value, path: codingPath))
    }
}
