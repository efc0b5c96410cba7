import Foundation

/// An array's elements, located in one pass and read in order.
struct MessagePackUnkeyedDecoder: UnkeyedDecodingContainer {
    let decoder: MessagePackDecoderImpl
    private let offsets: [Int]
    private(set) var currentIndex = 0

    init(decoder: MessagePackDecoderImpl) throws {
        self.decoder = decoder
        guard let offsets = try decoder.arrayOffsets() else {
            throw decoder.mismatch([MessagePackValue].self, try decoder.header(at: decoder.offset).0, decoder.path)
        }
        self.offsets = offsets
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { offsets.count }
    var isAtEnd: Bool { currentIndex >= offsets.count }

    private var currentPath: PathNode { PathNode(parent: decoder.path, key: WireKey(intValue: currentIndex)) }

    private mutating func next(_ type: Any.Type) throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: PathNode.keys(of: currentPath), debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return offsets[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .nil = try decoder.header(at: offsets[currentIndex]).0 else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let index = currentIndex
        return try decoder.decodeString(
            at: try next(type), path: PathNode(parent: decoder.path, key: WireKey(intValue: index)))
    }

    mutating func decode(_ type: Int.Type) throws -> Int {
        let index = currentIndex
        return try decoder.decodeInteger(
            at: try next(type), path: PathNode(parent: decoder.path, key: WireKey(intValue: index)))
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let index = currentIndex
        return try decoder.decodeFloatingPoint(
            at: try next(type), path: PathNode(parent: decoder.path, key: WireKey(intValue: index)))
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = currentPath
        return try decoder.unbox(at: try next(type), as: type, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let path = currentPath
        return try MessagePackDecoderImpl(
            offset: try next([String: MessagePackValue].self), path: path, context: decoder.context
        )
        .container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = currentPath
        return try MessagePackDecoderImpl(
            offset: try next([MessagePackValue].self), path: path, context: decoder.context
        )
        .unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = currentPath
        return MessagePackDecoderImpl(offset: try next(MessagePackValue.self), path: path, context: decoder.context)
    }
}
