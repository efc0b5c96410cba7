import Foundation

/// The members of one taped object, found through the ``KeyTable`` of `Key`, or — for a
/// dictionary's keys, which are data rather than names — through an index of the object's keys.
/// A class: `KeyedDecodingContainer` calls it through code generic over `Key`, which copies a
/// struct (retaining each of its references) on every call, and a class reference once.
final class JSONTapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: JSONTapeDecoder
    // The decoder and its context hold these for as long as they live, and this container holds
    // the decoder: used
    // without retaining them, which otherwise costs as much as the lookup itself.
    private let unretainedTape: Unmanaged<JSONTape>
    private let unretainedTable: Unmanaged<KeyTable>?
    private let unretainedWireKeys: Unmanaged<WireKeyCache>
    /// The object's entry index.
    let object: Int
    /// The decoder's ``JSONTapeDecoder/generation``.
    private let generation: Int
    /// The length of the decoder's path where this container was made.
    let depth: Int
    /// For a dictionary: each key's last entry index.
    private let index: [String: Int]

    init(decoder: JSONTapeDecoder, object: Int, table: KeyTable?, depth: Int) {
        self.decoder = decoder
        self.unretainedTape = Unmanaged.passUnretained(decoder.tape)
        self.unretainedTable = table.map { Unmanaged.passUnretained($0) }
        self.unretainedWireKeys = Unmanaged.passUnretained(decoder.context.keys)
        self.object = object
        self.generation = decoder.generation
        self.depth = depth
        if let table {
            let entry = decoder.tape[object]
            if entry.owner != table.id { table.tag(object, in: decoder.tape) }
            self.index = [:]
        } else {
            var index = [String: Int](minimumCapacity: Int(decoder.tape[object].end))
            Self.forEachKey(of: object, in: decoder.tape) { index[decoder.tape.string(at: $0)] = $0 }
            self.index = index
        }
    }

    private static func forEachKey(of object: Int, in tape: JSONTape, _ body: (Int) -> Void) {
        let end = Int(tape[object].start)
        var key = object + 1
        while key < end {
            body(key)
            key = tape.next(after: key + 1)
        }
    }

    var codingPath: [any CodingKey] { PathNode.keys(of: decoder.pathNode(depth: depth, step: JSONTapeDecoder.noStep)) }

    var allKeys: [Key] {
        guard (try? decoder.checkOpen()) != nil else { return [] }
        if unretainedTable == nil { return index.keys.compactMap { Key(stringValue: $0) } }
        var seen = Set<String>()
        var keys: [Key] = []
        Self.forEachKey(of: object, in: decoder.tape) {
            let name = decoder.tape.string(at: $0)
            if seen.insert(name).inserted, let key = Key(stringValue: name) { keys.append(key) }
        }
        return keys
    }

    // MARK: - Finding members

    /// The entry index of the member's key; the value is the entry after it.
    @inline(__always) private func find(_ key: Key) throws -> Int? {
        guard unretainedTape._withUnsafeGuaranteedRef({ $0.isOpen && $0.generation == generation }) else {
            throw JSONTapeDecoder.usedAfterReturn
        }
        guard let unretainedTable else { return index[key.stringValue] }
        let name = key.stringValue
        return unretainedTable._withUnsafeGuaranteedRef { table in
            unretainedTape._withUnsafeGuaranteedRef { tape in
                unretainedWireKeys._withUnsafeGuaranteedRef { table.member(name, of: object, in: tape, wireKeys: $0) }
            }
        }
    }

    private func wireKey(_ key: Key) -> String {
        unretainedTable == nil ? key.stringValue : decoder.context.keys.wireKey(for: key.stringValue)
    }

    private func require(_ key: Key) throws -> Int {
        guard let found = try find(key) else {
            let wire = wireKey(key)
            throw DecodingError.keyNotFound(
                WireKey(stringValue: wire),
                .init(codingPath: codingPath, debugDescription: "no value for the key \"\(wire)\""))
        }
        return found
    }

    func contains(_ key: Key) -> Bool { (try? find(key)) != nil }

    // MARK: - Decoding

    func decodeNil(forKey key: Key) throws -> Bool { decoder.tape[try require(key) + 1].kind == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let found = try require(key)
        return try decoder.bool(at: found + 1, depth: depth, step: found)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let found = try require(key)
        return try decoder.string(at: found + 1, depth: depth, step: found)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let found = try require(key)
        return try decoder.double(at: found + 1, depth: depth, step: found)
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let found = try require(key)
        return try decoder.float(at: found + 1, depth: depth, step: found)
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
        let found = try require(key)
        return try decoder.integer(I.self, at: found + 1, depth: depth, step: found)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let found = try require(key)
        return try decoder.decode(type, at: found + 1, depth: depth, step: found)
    }

    // Spelled out so that a missing key and `null` cost one lookup.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let found = try find(key), decoder.tape[found + 1].kind != .null else { return nil }
        return try decoder.decode(type, at: found + 1, depth: depth, step: found)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let found = try find(key), decoder.tape[found + 1].kind != .null else { return nil }
        return try decoder.string(at: found + 1, depth: depth, step: found)
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let found = try find(key), decoder.tape[found + 1].kind != .null else { return nil }
        return try decoder.integer(Int.self, at: found + 1, depth: depth, step: found)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let found = try find(key), decoder.tape[found + 1].kind != .null else { return nil }
        return try decoder.double(at: found + 1, depth: depth, step: found)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let found = try find(key), decoder.tape[found + 1].kind != .null else { return nil }
        return try decoder.bool(at: found + 1, depth: depth, step: found)
    }

    // MARK: - Nested

    /// A decoder of its own standing at the member's value, for containers that outlive this call.
    private func child(at index: Int, step: Int) -> JSONTapeDecoder {
        decoder.child(at: index, depth: depth, step: step)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let found = try require(key)
        return try child(at: found + 1, step: found).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let found = try require(key)
        return try child(at: found + 1, step: found).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try decoder.checkOpen()
        return try memberDecoder(wire: "super", found: KeyTable.search("super", in: object, of: decoder.tape))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try memberDecoder(wire: wireKey(key), found: find(key))
    }

    /// A decoder at the member, or at `null` when there is none, as the tree decoder gives.
    private func memberDecoder(wire: String, found: Int?) throws -> any Decoder {
        if let found { return child(at: found + 1, step: found) }
        let path = PathNode(
            parent: decoder.pathNode(depth: depth, step: JSONTapeDecoder.noStep), key: WireKey(stringValue: wire))
        return ValueDecoderImpl(value: .null, path: path, context: decoder.context)
    }
}
