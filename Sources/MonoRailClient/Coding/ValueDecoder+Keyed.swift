import Foundation

struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let decoder: ValueDecoderImpl
    let mapsKeys: Bool

    init(object: [String: JSONValue], decoder: ValueDecoderImpl) {
        self.object = object
        self.decoder = decoder
        self.mapsKeys = !decoder.context.keys.isDictionaryKey(Key.self)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        // Wire keys are mapped from Swift names, so unknown keys can only be offered as they are.
        object.keys.compactMap { Key(stringValue: $0) }
    }

    @inline(__always) private func wireKey(_ key: Key) -> String {
        mapsKeys ? decoder.context.keys.wireKey(for: key.stringValue) : key.stringValue
    }

    @inline(__always) private func childPath(_ wireKey: String) -> PathNode {
        PathNode(parent: decoder.path, key: WireKey(stringValue: wireKey))
    }

    private func require(_ key: Key) throws -> (JSONValue, String) {
        let wire = wireKey(key)
        guard let value = member(wire) else {
            throw DecodingError.keyNotFound(
                WireKey(stringValue: wire),
                .init(codingPath: decoder.codingPath, debugDescription: "no value for the key \"\(wire)\""))
        }
        return (value, wire)
    }

    func contains(_ key: Key) -> Bool { member(wireKey(key)) != nil }

    /// The value under `wire`. Small objects (most nested values) are searched by comparing keys,
    /// which costs less than hashing the key.
    @inline(__always) private func member(_ wire: String) -> JSONValue? {
        guard object.count <= 8 else { return object[wire] }
        for (key, value) in object where key == wire { return value }
        return nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let (value, _) = try require(key)
        return value.isNull
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let (value, wire) = try require(key)
        if case .bool(let bool) = value { return bool }
        return try decoder.unboxBool(value, childPath(wire))
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let (value, wire) = try require(key)
        if case .string(let string) = value { return string }
        return try decoder.unboxString(value, childPath(wire))
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let (value, wire) = try require(key)
        if case .double(let double) = value { return double }
        return try decoder.unboxDouble(value, childPath(wire))
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let (value, wire) = try require(key)
        return try decoder.unboxFloat(value, childPath(wire))
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    @inline(__always) private func integer<I: FixedWidthInteger>(_ key: Key) throws -> I {
        let (value, wire) = try require(key)
        if case .int(let int) = value, let exact = I(exactly: int) { return exact }
        return try decoder.unboxInteger(value, as: I.self, childPath(wire))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (value, wire) = try require(key)
        return try decoder.unbox(value, as: type, path: childPath(wire))
    }

    // `decodeIfPresent` is spelled out so that a missing key and `null` cost one lookup, not three.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let wire = wireKey(key)
        guard let value = member(wire), !value.isNull else { return nil }
        return try decoder.unbox(value, as: type, path: childPath(wire))
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        let wire = wireKey(key)
        guard let value = member(wire), !value.isNull else { return nil }
        if case .string(let string) = value { return string }
        return try decoder.unboxString(value, childPath(wire))
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        let wire = wireKey(key)
        guard let value = member(wire), !value.isNull else { return nil }
        if case .int(let int) = value, let exact = Int(exactly: int) { return exact }
        return try decoder.unboxInteger(value, as: Int.self, childPath(wire))
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        let wire = wireKey(key)
        guard let value = member(wire), !value.isNull else { return nil }
        if case .double(let double) = value { return double }
        return try decoder.unboxDouble(value, childPath(wire))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        let wire = wireKey(key)
        guard let value = member(wire), !value.isNull else { return nil }
        if case .bool(let bool) = value { return bool }
        return try decoder.unboxBool(value, childPath(wire))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, wire) = try require(key)
        return try ValueDecoderImpl(value: value, path: childPath(wire), context: decoder.context)
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let (value, wire) = try require(key)
        return try ValueDecoderImpl(value: value, path: childPath(wire), context: decoder.context).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let wire = "super"
        return ValueDecoderImpl(value: object[wire] ?? .null, path: childPath(wire), context: decoder.context)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        let wire = wireKey(key)
        return ValueDecoderImpl(value: object[wire] ?? .null, path: childPath(wire), context: decoder.context)
    }
}
