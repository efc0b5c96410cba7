import Foundation

/// The elements of one taped array, in order.
struct JSONTapeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: JSONTapeDecoder
    /// The array's entry index.
    let array: Int
    /// The length of the decoder's path where this container was made.
    let depth: Int
    /// The entry index of the next element.
    private var position: Int
    private(set) var currentIndex = 0
    let count: Int?

    init(decoder: JSONTapeDecoder, array: Int, depth: Int) {
        self.decoder = decoder
        self.array = array
        self.depth = depth
        self.position = array + 1
        self.count = Int(decoder.tape[array].end)
    }

    var codingPath: [any CodingKey] { PathNode.keys(of: decoder.pathNode(depth: depth, step: JSONTapeDecoder.noStep)) }
    var isAtEnd: Bool { currentIndex >= count ?? 0 }

    /// The next element's entry index and its step, the complement of its index.
    private mutating func next<T>(_ type: T.Type) throws -> (index: Int, step: Int) {
        try decoder.checkOpen()
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: codingPath + [WireKey(intValue: currentIndex)],
                    debugDescription: "the array has only \(count ?? 0) elements"))
        }
        let element = (position, ~currentIndex)
        position = decoder.tape.next(after: position)
        currentIndex += 1
        return element
    }

    mutating func decodeNil() throws -> Bool {
        try decoder.checkOpen()
        guard !isAtEnd, decoder.tape[position].kind == .null else { return false }
        position += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (index, step) = try next(type)
        return try decoder.bool(at: index, depth: depth, step: step)
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let (index, step) = try next(type)
        return try decoder.string(at: index, depth: depth, step: step)
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let (index, step) = try next(type)
        return try decoder.double(at: index, depth: depth, step: step)
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let (index, step) = try next(type)
        return try decoder.float(at: index, depth: depth, step: step)
    }

    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    private mutating func integer<I: FixedWidthInteger>() throws -> I {
        let (index, step) = try next(I.self)
        return try decoder.integer(I.self, at: index, depth: depth, step: step)
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (index, step) = try next(type)
        return try decoder.decode(type, at: index, depth: depth, step: step)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let (index, step) = try next([String: JSONValue].self)
        return try decoder.child(at: index, depth: depth, step: step).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (index, step) = try next([JSONValue].self)
        return try decoder.child(at: index, depth: depth, step: step).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (index, step) = try next(JSONValue.self)
        return decoder.child(at: index, depth: depth, step: step)
    }
}
