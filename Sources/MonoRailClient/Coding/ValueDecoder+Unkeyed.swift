import Foundation

struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let decoder: ValueDecoderImpl
    private(set) var currentIndex = 0

    init(array: [JSONValue], decoder: ValueDecoderImpl) {
        self.array = array
        self.decoder = decoder
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, PathNode) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(
                    codingPath: decoder.codingPath + [WireKey(intValue: currentIndex)],
                    debugDescription: "the array has only \(array.count) elements"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], PathNode(parent: decoder.path, key: WireKey(intValue: currentIndex)))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if array[currentIndex].isNull {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (value, path) = try next(type)
        return try decoder.unboxBool(value, path)
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let (value, path) = try next(type)
        if case .string(let string) = value { return string }
        return try decoder.unboxString(value, path)
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let (value, path) = try next(type)
        return try decoder.unboxDouble(value, path)
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let (value, path) = try next(type)
        return try decoder.unboxFloat(value, path)
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
        let (value, path) = try next(I.self)
        return try decoder.unboxInteger(value, as: I.self, path)
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try decoder.unbox(value, as: type, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        let (value, path) = try next([String: JSONValue].self)
        return try ValueDecoderImpl(value: value, path: path, context: decoder.context).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([JSONValue].self)
        return try ValueDecoderImpl(value: value, path: path, context: decoder.context).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(JSONValue.self)
        return ValueDecoderImpl(value: value, path: path, context: decoder.context)
    }
}
