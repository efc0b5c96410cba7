import Foundation

/// A map's keys and where each value starts, found in one pass over the map; values are read
/// only when asked for. Small maps (most records) are searched by comparing key bytes, which is
/// faster than hashing every key.
/// One key of a map and where its value starts. Not nested in the generic container, so that
/// no generic metadata is instantiated per map.
struct MessagePackMapEntry {
    /// The key's UTF-8 bytes, or `keyCount == -1` for an integer key held in `integerKey`.
    var keyStart: Int
    var keyCount: Int
    var integerKey: String?
    var valueOffset: Int
}

extension MessagePackDecoderImpl {
    /// The entries of the map at this decoder's offset, or `nil` when the value is no map.
    func mapEntries() throws -> [MessagePackMapEntry]? {
        let maxDepth = context.maxDepth
        return try context.input.bytes.withUnsafeBytes { raw -> [MessagePackMapEntry]? in
            var cursor = MessagePackCursor(raw, offset: offset)
            guard case .map(let count) = try cursor.header() else { return nil }
            var entries: [MessagePackMapEntry] = []
            entries.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count {
                var entry: MessagePackMapEntry
                switch try cursor.header() {
                case .string(let length):
                    entry = MessagePackMapEntry(
                        keyStart: cursor.offset, keyCount: length, integerKey: nil, valueOffset: 0)
                    _ = cursor.take(length)
                case .int(let number):
                    entry = MessagePackMapEntry(keyStart: 0, keyCount: -1, integerKey: String(number), valueOffset: 0)
                case .uint(let number):
                    entry = MessagePackMapEntry(keyStart: 0, keyCount: -1, integerKey: String(number), valueOffset: 0)
                default:
                    // A key no Swift key can name: its value is stepped over.
                    try cursor.skipValue(maxDepth: maxDepth)
                    continue
                }
                entry.valueOffset = cursor.offset
                try cursor.skipValue(maxDepth: maxDepth)
                entries.append(entry)
            }
            return entries
        }
    }

    /// Where each element of the array at this decoder's offset starts, or `nil` when the value is
    /// no array.
    func arrayOffsets() throws -> [Int]? {
        let maxDepth = context.maxDepth
        return try context.input.bytes.withUnsafeBytes { raw -> [Int]? in
            var cursor = MessagePackCursor(raw, offset: offset)
            guard case .array(let count) = try cursor.header() else { return nil }
            var offsets: [Int] = []
            offsets.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count {
                offsets.append(cursor.offset)
                try cursor.skipValue(maxDepth: maxDepth)
            }
            return offsets
        }
    }
}

/// A map's keys and where each value starts, found in one pass over the map; values are read
/// only when asked for. Small maps (most records) are searched by comparing key bytes, which is
/// faster than hashing every key.
struct MessagePackKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: MessagePackDecoderImpl
    private let entries: [MessagePackMapEntry]
    private let isDictionary: Bool

    init(decoder: MessagePackDecoderImpl) throws {
        self.decoder = decoder
        self.isDictionary = decoder.context.keys.isDictionaryKey(Key.self)
        guard let entries = try decoder.mapEntries() else {
            throw decoder.mismatch(
                [String: MessagePackValue].self, try decoder.header(at: decoder.offset).0, decoder.path)
        }
        self.entries = entries
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        // Wire keys are mapped from Swift names, so unknown keys can only be offered as they are.
        entries.compactMap { entry in
            if let integerKey = entry.integerKey { return Key(stringValue: integerKey) }
            return (try? decoder.string(at: entry.keyStart, count: entry.keyCount, path: nil)).flatMap(
                Key.init(stringValue:))
        }
    }

    private func wireName(_ key: Key) -> String {
        isDictionary ? key.stringValue : decoder.context.keys.wireKey(for: key.stringValue)
    }

    private func valueOffset(_ key: Key) -> Int? {
        var name = wireName(key)
        return name.withUTF8 { wanted in
            decoder.context.input.bytes.withUnsafeBufferPointer { bytes in
                // The last of repeated keys wins, as in a JSON object and in the reference reader.
                for entry in entries.reversed() {
                    if entry.keyCount == wanted.count {
                        guard wanted.count > 0, let base = bytes.baseAddress, let wantedBase = wanted.baseAddress else {
                            return entry.valueOffset  // both empty
                        }
                        if memcmp(base + entry.keyStart, wantedBase, wanted.count) == 0 { return entry.valueOffset }
                    } else if let integerKey = entry.integerKey, integerKey.utf8.elementsEqual(wanted) {
                        return entry.valueOffset
                    }
                }
                return nil
            }
        }
    }

    private func childPath(_ key: Key) -> PathNode {
        PathNode(parent: decoder.path, key: WireKey(stringValue: wireName(key)))
    }

    private func offset(for key: Key) throws -> Int {
        guard let offset = valueOffset(key) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(codingPath: codingPath, debugDescription: "no value for \"\(wireName(key))\""))
        }
        return offset
    }

    func contains(_ key: Key) -> Bool { valueOffset(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder.isNil(at: try offset(for: key)) }

    // Synthesized `init(from:)` calls these overloads for scalar properties; answering them here
    // keeps generic dispatch and path allocations off the hot path (a path is built on failure only).
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder.decodeString(at: try offset(for: key), path: childPath(key))
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.decodeBool(at: try offset(for: key), path: childPath(key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.decodeFloatingPoint(at: try offset(for: key), path: childPath(key))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.decodeFloatingPoint(at: try offset(for: key), path: childPath(key))
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

    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try decoder.decodeInteger(at: try offset(for: key), path: childPath(key))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(at: try offset(for: key), as: type, path: childPath(key))
    }

    /// The offset of a present, non-nil value.
    private func presentOffset(_ key: Key) throws -> Int? {
        guard let offset = valueOffset(key), try !decoder.isNil(at: offset) else { return nil }
        return offset
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try presentOffset(key).map { try decoder.decodeString(at: $0, path: childPath(key)) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try presentOffset(key).map { try decoder.decodeInteger(at: $0, path: childPath(key)) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try presentOffset(key).map { try decoder.decodeFloatingPoint(at: $0, path: childPath(key)) }
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try presentOffset(key).map { try decoder.decodeBool(at: $0, path: childPath(key)) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try presentOffset(key).map { try decoder.unbox(at: $0, as: type, path: childPath(key)) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try MessagePackDecoderImpl(offset: try offset(for: key), path: childPath(key), context: decoder.context)
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try MessagePackDecoderImpl(offset: try offset(for: key), path: childPath(key), context: decoder.context)
            .unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let key = Key(stringValue: "super") else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: codingPath, debugDescription: "\(Key.self) has no \"super\" key"))
        }
        return try superDecoder(forKey: key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        MessagePackDecoderImpl(offset: try offset(for: key), path: childPath(key), context: decoder.context)
    }
}
