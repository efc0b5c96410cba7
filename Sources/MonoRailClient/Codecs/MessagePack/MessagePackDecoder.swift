public import Foundation

/// Decodes `Decodable` values from MessagePack.
///
/// It reads what ``MessagePackEncoder`` writes and what other implementations write: integers of
/// any width into any integer type that holds them exactly, `float 32` or `float 64` into either
/// floating-point type, timestamps (or ISO 8601 strings, or seconds) into `Date`, binary into `Data`.
/// Failures are `DecodingError`s whose coding path names the keys on the wire; malformed bytes are
/// a ``MessagePackError``.
///
/// ```swift
/// let train = try MessagePackDecoder().decode(Train.self, from: bytes)
/// ```
public struct MessagePackDecoder: Sendable {
    /// How Swift names map to map keys. Default: ``KeyMapping/identity``.
    public var keyMapping: KeyMapping
    /// Values made available to `init(from:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]
    /// Reads the bytes; its ``MessagePackReader/maxDepth`` bounds nesting.
    public var reader: MessagePackReader

    /// Creates a decoder.
    public init(keyMapping: KeyMapping = .identity, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.keyMapping = keyMapping
        self.userInfo = userInfo
        self.reader = MessagePackReader()
    }

    /// Parses bytes and decodes a value from them.
    ///
    /// - Throws: ``MessagePackError`` for malformed bytes, `DecodingError` for a value of the wrong shape.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: try reader.read(data))
    }

    /// Decodes a value from a tree.
    ///
    /// - Throws: `DecodingError`.
    public func decode<T: Decodable>(_ type: T.Type, from value: MessagePackValue) throws -> T {
        let context = MessagePackDecodingContext(keys: WireKeyCache(keyMapping), userInfo: userInfo)
        return try MessagePackDecoderImpl(value: value, codingPath: [], context: context).unbox(
            value, as: type, path: [])
    }
}

final class MessagePackDecodingContext {
    let keys: WireKeyCache
    let userInfo: [CodingUserInfoKey: any Sendable]

    init(keys: WireKeyCache, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.keys = keys
        self.userInfo = userInfo
    }
}

final class MessagePackDecoderImpl: Decoder {
    let value: MessagePackValue
    let codingPath: [any CodingKey]
    let context: MessagePackDecodingContext

    init(value: MessagePackValue, codingPath: [any CodingKey], context: MessagePackDecodingContext) {
        self.value = value
        self.codingPath = codingPath
        self.context = context
    }

    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let pairs) = value else {
            throw mismatch([String: MessagePackValue].self, value, codingPath)
        }
        return KeyedDecodingContainer(MessagePackKeyedDecoder<Key>(decoder: self, pairs: pairs))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([MessagePackValue].self, value, codingPath) }
        return MessagePackUnkeyedDecoder(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        MessagePackSingleValueDecoder(decoder: self)
    }

    // MARK: Unboxing

    func unbox<T: Decodable>(_ value: MessagePackValue, as type: T.Type, path: [any CodingKey]) throws -> T {
        if let special = try unboxSpecial(value, as: type, path: path) { return special }
        return try T(from: MessagePackDecoderImpl(value: value, codingPath: path, context: context))
    }

    private func unboxSpecial<T>(_ value: MessagePackValue, as type: T.Type, path: [any CodingKey]) throws -> T? {
        // The common scalars are read here, without allocating a decoder for each.
        switch value {
        case .string(let string) where type == String.self: return string as? T
        case .int, .uint:
            if type == Int.self { return try integer(value, path: path) as Int as? T }
            if type == Int64.self { return try integer(value, path: path) as Int64 as? T }
        case .double(let number) where type == Double.self: return number as? T
        case .bool(let bool) where type == Bool.self: return bool as? T
        default: break
        }
        if type == MessagePackValue.self { return value as? T }
        if type == Date.self { return try unboxDate(value, path) as? T }
        if type == Data.self {
            guard case .binary(let data) = value else { throw mismatch(Data.self, value, path) }
            return data as? T
        }
        if type == URL.self {
            guard case .string(let string) = value, let url = URL(string: string) else {
                throw mismatch(URL.self, value, path)
            }
            return url as? T
        }
        if type == UUID.self {
            guard case .string(let string) = value, let uuid = UUID(uuidString: string) else {
                throw mismatch(UUID.self, value, path)
            }
            return uuid as? T
        }
        if type == Decimal.self {
            switch value {
            case .string(let string): if let decimal = Decimal(string: string) { return decimal as? T }
            case .int(let number): return Decimal(number) as? T
            case .uint(let number): return Decimal(number) as? T
            case .double(let number): return Decimal(number) as? T
            case .float(let number): return Decimal(Double(number)) as? T
            default: break
            }
            throw mismatch(Decimal.self, value, path)
        }
        if case .extension(let extensionType, _) = value {
            // Only MessagePackValue can hold an application extension; anything else is told why.
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: path, debugDescription: "extension type \(extensionType) cannot become \(T.self)",
                    underlyingError: MessagePackError(
                        .unsupportedExtension, offset: 0, reason: "extension type \(extensionType) is not supported")))
        }
        return nil
    }

    private func unboxDate(_ value: MessagePackValue, _ path: [any CodingKey]) throws -> Date {
        switch value {
        case .timestamp(let timestamp): return timestamp.date
        case .int, .uint, .float, .double:
            if let seconds: Double = floatingPoint(value) { return Date(timeIntervalSince1970: seconds) }
        case .string(let string):
            for format in DateFormat.defaults { if let date = format.date(from: string) { return date } }
        default: break
        }
        throw mismatch(Date.self, value, path)
    }

    func integer<T: FixedWidthInteger>(_ value: MessagePackValue, path: [any CodingKey]) throws -> T {
        let result: T? =
            switch value {
            case .int(let number): T(exactly: number)
            case .uint(let number): T(exactly: number)
            case .double(let number): T(exactly: number)
            case .float(let number): T(exactly: number)
            default: nil
            }
        guard let result else { throw mismatch(T.self, value, path) }
        return result
    }

    func floatingPoint<T: BinaryFloatingPoint>(_ value: MessagePackValue) -> T? {
        switch value {
        case .double(let number): T(number)
        case .float(let number): T(number)
        case .int(let number): T(number)
        case .uint(let number): T(number)
        default: nil
        }
    }

    func mismatch(_ type: Any.Type, _ value: MessagePackValue, _ path: [any CodingKey]) -> DecodingError {
        if case .nil = value {
            return DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: path, debugDescription: "expected \(type), found nil"))
        }
        return DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path, debugDescription: "expected \(type), found \(value.kindDescription)"))
    }
}

struct MessagePackSingleValueDecoder: SingleValueDecodingContainer {
    let decoder: MessagePackDecoderImpl
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var value: MessagePackValue { decoder.value }

    func decodeNil() -> Bool { value == .nil }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let bool) = value else { throw decoder.mismatch(type, value, codingPath) }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let string) = value else { throw decoder.mismatch(type, value, codingPath) }
        return string
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard let number: Double = decoder.floatingPoint(value) else { throw decoder.mismatch(type, value, codingPath) }
        return number
    }

    func decode(_ type: Float.Type) throws -> Float {
        guard let number: Float = decoder.floatingPoint(value) else { throw decoder.mismatch(type, value, codingPath) }
        return number
    }

    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(value, path: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(value, path: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(value, path: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(value, path: codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(value, as: type, path: codingPath) }
}
