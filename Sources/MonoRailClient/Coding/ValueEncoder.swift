public import Foundation

/// Encodes `Encodable` values into a ``JSONValue`` tree or into JSON bytes.
///
/// Keys are mapped with ``CodingOptions/keyMapping`` (snake_case by default) and dates are written in
/// ``CodingOptions/dateEncodingFormat``. The same tree can later be written as JSON, form fields or
/// MessagePack, so every format agrees on keys and dates.
///
/// ```swift
/// struct NewTrain: Encodable { var company: String; var maxSpeed: Double }
/// let json = try ValueEncoder().encodeJSON(NewTrain(company: "DB", maxSpeed: 46.8))
/// // {"company":"DB","max_speed":46.8}
/// ```
public struct ValueEncoder: Sendable {
    /// Key mapping and date format.
    public var options: CodingOptions
    /// Values made available to `encode(to:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]
    /// Write object keys in sorted order, for stable output.
    public var sortsKeys: Bool

    /// Creates an encoder.
    public init(
        options: CodingOptions = CodingOptions(),
        userInfo: [CodingUserInfoKey: any Sendable] = [:],
        sortsKeys: Bool = false
    ) {
        self.options = options
        self.userInfo = userInfo
        self.sortsKeys = sortsKeys
    }

    /// Encodes a value into a tree.
    ///
    /// - Throws: `EncodingError` for values JSON cannot express, such as non-finite numbers.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let context = EncodingContext(options: options, userInfo: userInfo)
        return try context.box(value, path: nil)
    }

    /// Encodes a value as compact JSON.
    ///
    /// - Throws: `EncodingError` for values JSON cannot express, such as non-finite numbers.
    public func encodeJSON<T: Encodable>(_ value: T) throws -> Data {
        JSONWriter.serialize(try encode(value), sortedKeys: sortsKeys)
    }
}

final class EncodingContext {
    let options: CodingOptions
    let userInfo: [CodingUserInfoKey: any Sendable]
    let keys: WireKeyCache
    /// Files met while encoding, written as placeholders into the tree.
    var attachments = FileAttachments()

    init(options: CodingOptions, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.options = options
        self.userInfo = userInfo
        self.keys = WireKeyCache(options.keyMapping)
    }

    func box<T: Encodable>(_ value: T, path: PathNode?) throws -> JSONValue {
        // The common field types by exact type first: each cast that fails below is a look-up at run
        // time, and a large merge with live queries reads a field of every record it changes.
        if T.self == Double.self, let value = value as? Double { return try boxDouble(value, path) }
        if T.self == Int.self, let value = value as? Int { return .int(Int64(value)) }
        if T.self == String.self, let value = value as? String { return .string(value) }
        switch value {
        case let value as JSONValue: return value
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Date: return try boxDate(value, path)
        case let value as URL: return .string(value.absoluteString)
        case let value as Double: return try boxDouble(value, path)
        case let value as Float: return try boxDouble(Double(value), path)
        case let value as Decimal:
            return try boxDecimal(value, path)
        case let value as Data: return .string(value.base64EncodedString())
        default:
            let encoder = ValueEncoderImpl(context: self, path: path)
            try value.encode(to: encoder)
            return encoder.storage.resolve()
        }
    }

    /// A decimal as the JSON number its own digits write — `17.99`, not `NSDecimalNumber`'s
    /// `17.990000000000002` — or, when no `Double` writes those digits back, as a string of them,
    /// which Pydantic and DRF take for a decimal: a decimal is never sent as another number.
    func boxDecimal(_ value: Decimal, _ path: PathNode?) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: PathNode.keys(of: path), debugDescription: "\(value) cannot be written as JSON"))
        }
        let digits = value.description
        if let int = Int64(digits) { return .int(int) }
        if let double = Double(digits), double.isFinite, Decimal(string: double.description) == value {
            return .double(double)
        }
        return .string(digits)
    }

    func boxDouble(_ value: Double, _ path: PathNode?) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: PathNode.keys(of: path), debugDescription: "\(value) cannot be written as JSON"))
        }
        return .double(value)
    }

    func boxDate(_ value: Date, _ path: PathNode?) throws -> JSONValue {
        guard DateFormat.supportedRange.contains(value) else {
            // The seconds, not the date: Foundation's `Date.description` traps on NaN, and an error
            // must be printable.
            throw EncodingError.invalidValue(
                value.timeIntervalSince1970,
                .init(
                    codingPath: PathNode.keys(of: path),
                    debugDescription: DateFormat.unsupportedSeconds(value.timeIntervalSince1970)))
        }
        return .string(options.dateEncodingFormat.string(from: value))
    }

    func boxInteger<I: FixedWidthInteger>(_ value: I, _ path: PathNode?) throws -> JSONValue {
        if let int = Int64(exactly: value) { return .int(int) }
        if let uint = UInt64(exactly: value) { return .uint(uint) }
        throw EncodingError.invalidValue(
            value, .init(codingPath: PathNode.keys(of: path), debugDescription: "\(value) does not fit in 64 bits"))
    }
}

/// A node of the tree being built; containers write into it by reference, so nested containers
/// created before their values are encoded still end up in the right place.
final class EncodingNode {
    enum Storage {
        case empty
        case value(JSONValue)
        case object([String: EncodingNode])
        case array([EncodingNode])
    }

    var storage: Storage = .empty

    init() {}
    init(_ value: JSONValue) { storage = .value(value) }

    func resolve() -> JSONValue {
        switch storage {
        case .empty: return .object([:])
        case .value(let value): return value
        case .object(let members): return .object(members.mapValues { $0.resolve() })
        case .array(let elements): return .array(elements.map { $0.resolve() })
        }
    }
}

final class ValueEncoderImpl: Encoder {
    let context: EncodingContext
    let path: PathNode?
    let storage: EncodingNode

    init(context: EncodingContext, path: PathNode?, storage: EncodingNode = EncodingNode()) {
        self.context = context
        self.path = path
        self.storage = storage
    }

    var codingPath: [any CodingKey] { PathNode.keys(of: path) }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = storage.storage {} else { storage.storage = .object([:]) }
        return KeyedEncodingContainer(KeyedEncoderContainer<Key>(encoder: self, node: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = storage.storage {} else { storage.storage = .array([]) }
        return UnkeyedEncoderContainer(encoder: self, node: storage)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }
}

extension ValueEncoderImpl: SingleValueEncodingContainer {
    func encodeNil() throws { storage.storage = .value(.null) }
    func encode(_ value: Bool) throws { storage.storage = .value(.bool(value)) }
    func encode(_ value: String) throws { storage.storage = .value(.string(value)) }
    func encode(_ value: Double) throws { storage.storage = .value(try context.boxDouble(value, path)) }
    func encode(_ value: Float) throws { storage.storage = .value(try context.boxDouble(Double(value), path)) }
    func encode(_ value: Int) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: Int8) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: Int16) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: Int32) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: Int64) throws { storage.storage = .value(.int(value)) }
    func encode(_ value: UInt) throws { storage.storage = .value(try context.boxInteger(value, path)) }
    func encode(_ value: UInt8) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: UInt16) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: UInt32) throws { storage.storage = .value(.int(Int64(value))) }
    func encode(_ value: UInt64) throws { storage.storage = .value(try context.boxInteger(value, path)) }
    func encode<T: Encodable>(_ value: T) throws { storage.storage = .value(try context.box(value, path: path)) }
}

struct KeyedEncoderContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoderImpl
    let node: EncodingNode
    let mapsKeys: Bool

    init(encoder: ValueEncoderImpl, node: EncodingNode) {
        self.encoder = encoder
        self.node = node
        self.mapsKeys = !encoder.context.keys.isDictionaryKey(Key.self)
    }

    private func wireKey(_ key: Key) -> String {
        mapsKeys ? encoder.context.keys.wireKey(for: key.stringValue) : key.stringValue
    }

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: JSONValue, _ key: Key) {
        set(EncodingNode(value), key)
    }

    private func set(_ child: EncodingNode, _ key: Key) {
        guard case .object(var members) = node.storage else { return }
        node.storage = .empty
        members[wireKey(key)] = child
        node.storage = .object(members)
    }

    private func childPath(_ key: Key) -> PathNode {
        PathNode(parent: encoder.path, key: WireKey(stringValue: wireKey(key)))
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try encoder.context.boxDouble(value, childPath(key)), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try encoder.context.boxDouble(Double(value), childPath(key)), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(try encoder.context.boxInteger(value, nil), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        set(try encoder.context.boxInteger(value, nil), key)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try encoder.context.box(value, path: childPath(key)), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        child.storage = .object([:])
        set(child, key)
        let nested = ValueEncoderImpl(context: encoder.context, path: childPath(key), storage: child)
        return KeyedEncodingContainer(KeyedEncoderContainer<NestedKey>(encoder: nested, node: child))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        child.storage = .array([])
        set(child, key)
        let nested = ValueEncoderImpl(context: encoder.context, path: childPath(key), storage: child)
        return UnkeyedEncoderContainer(encoder: nested, node: child)
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        guard case .object(var members) = node.storage else { return encoder }
        members["super"] = child
        node.storage = .object(members)
        return ValueEncoderImpl(context: encoder.context, path: encoder.path, storage: child)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = EncodingNode()
        set(child, key)
        return ValueEncoderImpl(context: encoder.context, path: childPath(key), storage: child)
    }
}

struct UnkeyedEncoderContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoderImpl
    let node: EncodingNode

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int {
        if case .array(let elements) = node.storage { return elements.count }
        return 0
    }

    private func append(_ child: EncodingNode) {
        guard case .array(var elements) = node.storage else { return }
        node.storage = .empty
        elements.append(child)
        node.storage = .array(elements)
    }

    private func append(_ value: JSONValue) { append(EncodingNode(value)) }

    private var childPath: PathNode { PathNode(parent: encoder.path, key: WireKey(intValue: count)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try encoder.context.boxDouble(value, childPath)) }
    mutating func encode(_ value: Float) throws { append(try encoder.context.boxDouble(Double(value), childPath)) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: UInt) throws { append(try encoder.context.boxInteger(value, nil)) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(try encoder.context.boxInteger(value, nil)) }
    mutating func encode<T: Encodable>(_ value: T) throws { append(try encoder.context.box(value, path: childPath)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let child = EncodingNode()
        child.storage = .object([:])
        let path = childPath
        append(child)
        let nested = ValueEncoderImpl(context: encoder.context, path: path, storage: child)
        return KeyedEncodingContainer(KeyedEncoderContainer<NestedKey>(encoder: nested, node: child))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        child.storage = .array([])
        let path = childPath
        append(child)
        return UnkeyedEncoderContainer(
            encoder: ValueEncoderImpl(context: encoder.context, path: path, storage: child), node: child)
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        let path = childPath
        append(child)
        return ValueEncoderImpl(context: encoder.context, path: path, storage: child)
    }
}
