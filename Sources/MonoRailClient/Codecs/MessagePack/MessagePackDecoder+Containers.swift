import Foundation

struct MessagePackKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: MessagePackDecoderImpl
    let pairs: [MessagePackPair]
    /// Positions of keys for maps too large to scan; small maps (most records) are scanned, which
    /// is faster than hashing every key.
    private let positions: [String: Int]?
    private let isDictionary: Bool

    init(decoder: MessagePackDecoderImpl, pairs: [MessagePackPair]) {
        self.decoder = decoder
        self.pairs = pairs
        self.isDictionary = decoder.context.keys.isDictionaryKey(Key.self)
        if pairs.count > 16 {
            var positions: [String: Int] = [:]
            positions.reserveCapacity(pairs.count)
            for (index, pair) in pairs.enumerated() {
                if let name = Self.name(of: pair.key) { positions[name] = index }
            }
            self.positions = positions
        } else {
            self.positions = nil
        }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    /// String keys as they are, integer keys as their decimal text (so `[Int: V]` decodes).
    private static func name(of key: MessagePackValue) -> String? {
        switch key {
        case .string(let string): string
        case .int(let number): String(number)
        case .uint(let number): String(number)
        default: nil
        }
    }

    var allKeys: [Key] {
        // Wire keys are mapped from Swift names, so unknown keys can only be offered as they are.
        pairs.compactMap { pair in Self.name(of: pair.key).flatMap { Key(stringValue: $0) } }
    }

    private func wireName(_ key: Key) -> String {
        isDictionary ? key.stringValue : decoder.context.keys.wireKey(for: key.stringValue)
    }

    private func lookup(_ key: Key) -> MessagePackValue? {
        let name = wireName(key)
        if let positions { return positions[name].map { pairs[$0].value } }
        for pair in pairs {
            if case .string(let string) = pair.key, string == name { return pair.value }
        }
        for pair in pairs where Self.name(of: pair.key) == name { return pair.value }
        return nil
    }

    private func value(for key: Key) throws -> MessagePackValue {
        guard let value = lookup(key) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(codingPath: codingPath, debugDescription: "no value for \"\(wireName(key))\""))
        }
        return value
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try value(for: key) == .nil }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(try value(for: key), as: type, path: codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = lookup(key), value != .nil else { return nil }
        return try decoder.unbox(value, as: type, path: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try MessagePackDecoderImpl(value: try value(for: key), codingPath: codingPath + [key], context: decoder.context)
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try MessagePackDecoderImpl(value: try value(for: key), codingPath: codingPath + [key], context: decoder.context)
            .unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        MessagePackDecoderImpl(
            value: lookup(Key(stringValue: "super")!) ?? .nil, codingPath: codingPath, context: decoder.context)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        MessagePackDecoderImpl(value: lookup(key) ?? .nil, codingPath: codingPath + [key], context: decoder.context)
    }
}

struct MessagePackUnkeyedDecoder: UnkeyedDecodingContainer {
    let decoder: MessagePackDecoderImpl
    let elements: [MessagePackValue]
    private(set) var currentIndex = 0

    init(decoder: MessagePackDecoderImpl, elements: [MessagePackValue]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var currentPath: [any CodingKey] { codingPath + [WireKey(intValue: currentIndex)] }

    private mutating func next(_ type: Any.Type) throws -> MessagePackValue {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: currentPath, debugDescription: "the array has no more elements")
            )
        }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .nil else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = currentPath
        return try decoder.unbox(try next(type), as: type, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let path = currentPath
        return try MessagePackDecoderImpl(
            value: try next([String: MessagePackValue].self), codingPath: path, context: decoder.context
        )
        .container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = currentPath
        return try MessagePackDecoderImpl(
            value: try next([MessagePackValue].self), codingPath: path, context: decoder.context
        )
        .unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = currentPath
        return MessagePackDecoderImpl(
            value: try next(MessagePackValue.self), codingPath: path, context: decoder.context)
    }
}
