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
///
/// It decodes straight from the bytes, building no intermediate tree: one pass checks the whole
/// structure (lengths, nesting, trailing bytes), then each container indexes its keys or elements
/// and values are read where they lie. Strings are validated as UTF-8 when they are read.
public struct MessagePackDecoder: Sendable {
    /// How Swift names map to map keys. Default: ``KeyMapping/identity``.
    public var keyMapping: KeyMapping
    /// Values made available to `init(from:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]
    /// The deepest nesting of arrays and maps accepted.
    public var maxDepth: Int

    /// Creates a decoder.
    public init(
        keyMapping: KeyMapping = .identity, userInfo: [CodingUserInfoKey: any Sendable] = [:], maxDepth: Int = 512
    ) {
        self.keyMapping = keyMapping
        self.userInfo = userInfo
        self.maxDepth = maxDepth
    }

    /// Decodes a value from bytes.
    ///
    /// - Throws: ``MessagePackError`` for malformed bytes, `DecodingError` for a value of the wrong shape.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let input = MessagePackInput(Array(data))
        try input.withCursor(at: 0) { (cursor: inout MessagePackCursor) throws(MessagePackError) in
            try cursor.skipValue(maxDepth: maxDepth)
            guard cursor.isAtEnd else {
                throw cursor.error(.trailingBytes, "\(cursor.remaining) bytes follow the value")
            }
        }
        let context = MessagePackDecodingContext(
            input: input, keys: WireKeyCache(keyMapping), userInfo: userInfo, maxDepth: maxDepth)
        return try MessagePackDecoderImpl(offset: 0, path: nil, context: context).unbox(at: 0, as: type, path: nil)
    }

    /// Decodes a value from a tree.
    ///
    /// - Throws: `DecodingError`.
    public func decode<T: Decodable>(_ type: T.Type, from value: MessagePackValue) throws -> T {
        try decode(type, from: MessagePackWriter.serialize(value))
    }
}

/// The bytes every container of one decode reads. Held in an array the decoder owns, so no
/// container can outlive the memory it points into.
final class MessagePackInput {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    @inline(__always) func withCursor<T>(
        at offset: Int, _ body: (inout MessagePackCursor) throws(MessagePackError) -> T
    ) throws(MessagePackError) -> T {
        let result: Result<T, MessagePackError> = bytes.withUnsafeBytes { raw in
            var cursor = MessagePackCursor(raw, offset: offset)
            do throws(MessagePackError) { return .success(try body(&cursor)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

final class MessagePackDecodingContext {
    let input: MessagePackInput
    let keys: WireKeyCache
    let userInfo: [CodingUserInfoKey: any Sendable]
    let maxDepth: Int

    init(input: MessagePackInput, keys: WireKeyCache, userInfo: [CodingUserInfoKey: any Sendable], maxDepth: Int) {
        self.input = input
        self.keys = keys
        self.userInfo = userInfo
        self.maxDepth = maxDepth
    }
}

final class MessagePackDecoderImpl: Decoder {
    /// Where this decoder's value starts.
    let offset: Int
    let path: PathNode?
    let context: MessagePackDecodingContext

    init(offset: Int, path: PathNode?, context: MessagePackDecodingContext) {
        self.offset = offset
        self.path = path
        self.context = context
    }

    var codingPath: [any CodingKey] { PathNode.keys(of: path) }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(try MessagePackKeyedDecoder<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try MessagePackUnkeyedDecoder(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        MessagePackSingleValueDecoder(decoder: self)
    }

    // MARK: Reading

    /// The header of the value at `offset` and where its payload starts.
    @inline(__always) func header(at offset: Int) throws -> (MessagePackCursor.Header, Int) {
        try context.input.bytes.withUnsafeBytes { raw in
            var cursor = MessagePackCursor(raw, offset: offset)
            let header = try cursor.header()
            return (header, cursor.offset)
        }
    }

    // MARK: Scalars, without generics on the hot path

    func decodeString(at offset: Int, path: @autoclosure () -> PathNode?) throws -> String {
        let (header, payload) = try header(at: offset)
        guard case .string(let count) = header else { throw mismatch(String.self, header, path()) }
        return try string(at: payload, count: count, path: path())
    }

    func decodeBool(at offset: Int, path: @autoclosure () -> PathNode?) throws -> Bool {
        let header = try header(at: offset).0
        guard case .bool(let bool) = header else { throw mismatch(Bool.self, header, path()) }
        return bool
    }

    func decodeFloatingPoint<T: BinaryFloatingPoint>(at offset: Int, path: @autoclosure () -> PathNode?) throws -> T {
        let header = try header(at: offset).0
        guard let number: T = floatingPoint(header) else { throw mismatch(T.self, header, path()) }
        return number
    }

    func decodeInteger<T: FixedWidthInteger>(at offset: Int, path: @autoclosure () -> PathNode?) throws -> T {
        try integer(try header(at: offset).0, path())
    }

    func isNil(at offset: Int) throws -> Bool {
        guard case .nil = try header(at: offset).0 else { return false }
        return true
    }

    /// The whole value at `offset` as a tree.
    func tree(at offset: Int) throws -> MessagePackValue {
        let maxDepth = context.maxDepth
        return try context.input.withCursor(at: offset) { (cursor: inout MessagePackCursor) throws(MessagePackError) in
            try MessagePackReader.value(&cursor, depth: 0, maxDepth: maxDepth)
        }
    }

    func string(at payload: Int, count: Int, path: @autoclosure () -> PathNode?) throws -> String {
        let string: String? = context.input.bytes.withUnsafeBufferPointer { buffer in
            String.validatedUTF8(UnsafeBufferPointer(rebasing: buffer[payload..<(payload + count)]))
        }
        guard let string else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: PathNode.keys(of: path()), debugDescription: "a string is not valid UTF-8",
                    underlyingError: MessagePackError(
                        .invalidUTF8, offset: payload, reason: "a string is not valid UTF-8")))
        }
        return string
    }

    func data(at payload: Int, count: Int) -> Data {
        Data(context.input.bytes[payload..<(payload + count)])
    }

    // MARK: Unboxing

    func unbox<T: Decodable>(at offset: Int, as type: T.Type, path: PathNode?) throws -> T {
        let (header, payload) = try header(at: offset)
        if let value = try unboxSpecial(header, payload: payload, offset: offset, as: type, path: path) { return value }
        return try T(from: MessagePackDecoderImpl(offset: offset, path: path, context: context))
    }

    /// Scalars and the types with a MessagePack form of their own, read without a decoder each.
    private func unboxSpecial<T>(
        _ header: MessagePackCursor.Header, payload: Int, offset: Int, as type: T.Type, path: PathNode?
    ) throws -> T? {
        switch header {
        case .string(let count):
            if type == String.self { return try string(at: payload, count: count, path: path) as? T }
            if type == Date.self {
                let text = try string(at: payload, count: count, path: path)
                if let date = DateFormat.defaults.date(from: text) { return date as? T }
                throw mismatch(Date.self, "a string that is no date", path)
            }
            if type == URL.self {
                guard let url = URL(string: try string(at: payload, count: count, path: path)) else {
                    throw mismatch(URL.self, "a string that is no URL", path)
                }
                return url as? T
            }
            if type == UUID.self {
                guard let uuid = UUID(uuidString: try string(at: payload, count: count, path: path)) else {
                    throw mismatch(UUID.self, "a string that is no UUID", path)
                }
                return uuid as? T
            }
            if type == Decimal.self {
                guard let decimal = Decimal(exactly: try string(at: payload, count: count, path: path)) else {
                    throw mismatch(Decimal.self, "a string that is no number", path)
                }
                return decimal as? T
            }
        case .int, .uint, .float, .double:
            if type == Int.self { return try integer(header, path) as Int as? T }
            if type == Int64.self { return try integer(header, path) as Int64 as? T }
            if type == Double.self { return floatingPoint(header) as Double? as? T }
            if type == Date.self, let seconds: Double = floatingPoint(header) {
                guard let date = DateFormat.date(secondsSince1970: seconds) else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: PathNode.keys(of: path),
                            debugDescription: DateFormat.unsupportedSeconds(seconds)))
                }
                return date as? T
            }
            if type == Decimal.self {
                switch header {
                case .int(let number): return Decimal(number) as? T
                case .uint(let number): return Decimal(number) as? T
                case .float(let number): return try decimal(Double(number), path) as? T
                case .double(let number): return try decimal(number, path) as? T
                default: break
                }
            }
        case .bool(let bool) where type == Bool.self: return bool as? T
        case .binary(let count) where type == Data.self: return data(at: payload, count: count) as? T
        case .extension(let extensionType, let count):
            if type == MessagePackValue.self { return try tree(at: offset) as? T }
            if extensionType == -1, type == Date.self {
                let timestamp = context.input.bytes.withUnsafeBytes { raw in
                    MessagePackTimestamp.read(UnsafeRawBufferPointer(rebasing: raw[payload..<(payload + count)]))
                }
                guard let timestamp, DateFormat.supportedRange.contains(timestamp.date) else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: PathNode.keys(of: path),
                            debugDescription: timestamp.map {
                                "the timestamp \($0) is not a date between the years 0000 and 9999"
                            }
                                ?? "a malformed timestamp"))
                }
                return timestamp.date as? T
            }
            if extensionType != -1 {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: PathNode.keys(of: path),
                        debugDescription: "extension type \(extensionType) cannot become \(T.self)",
                        underlyingError: MessagePackError(
                            .unsupportedExtension, offset: offset,
                            reason: "extension type \(extensionType) is not supported")))
            }
        default: break
        }
        if type == MessagePackValue.self { return try tree(at: offset) as? T }
        if type == Date.self || type == Data.self || type == URL.self || type == UUID.self || type == Decimal.self {
            throw mismatch(T.self, header, path)
        }
        return nil
    }

    /// A `Decimal` from its shortest round-tripping digits, as the JSON decoder reads one; Foundation's
    /// `Decimal(Double)` traps on infinity and turns NaN into `Decimal.nan`.
    private func decimal(_ number: Double, _ path: PathNode?) throws -> Decimal {
        guard number.isFinite, let decimal = Decimal(exactly: number.description) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: PathNode.keys(of: path),
                    debugDescription: "the number \(number) does not fit in Decimal"))
        }
        return decimal
    }

    func integer<T: FixedWidthInteger>(_ header: MessagePackCursor.Header, _ path: @autoclosure () -> PathNode?) throws
        -> T
    {
        let result: T? =
            switch header {
            case .int(let number): T(exactly: number)
            case .uint(let number): T(exactly: number)
            case .double(let number): T(exactly: number)
            case .float(let number): T(exactly: number)
            default: nil
            }
        guard let result else { throw mismatch(T.self, header, path()) }
        return result
    }

    func floatingPoint<T: BinaryFloatingPoint>(_ header: MessagePackCursor.Header) -> T? {
        switch header {
        // A finite double too large for the type does not fit, as JSON decoding reports it.
        case .double(let number) where number.isFinite && !T(number).isFinite: nil
        case .double(let number): T(number)
        case .float(let number): T(number)
        case .int(let number): T(number)
        case .uint(let number): T(number)
        default: nil
        }
    }

    /// The error for a value of the wrong kind; an application extension says it is unsupported.
    func mismatch(_ type: Any.Type, _ header: MessagePackCursor.Header, _ path: PathNode?) -> DecodingError {
        guard case .extension(let extensionType, _) = header, extensionType != -1 else {
            return mismatch(type, Self.kind(header), path)
        }
        return DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: PathNode.keys(of: path),
                debugDescription: "extension type \(extensionType) cannot become \(type)",
                underlyingError: MessagePackError(
                    .unsupportedExtension, offset: 0, reason: "extension type \(extensionType) is not supported")))
    }

    func mismatch(_ type: Any.Type, _ found: String, _ path: PathNode?) -> DecodingError {
        let context = DecodingError.Context(
            codingPath: PathNode.keys(of: path), debugDescription: "expected \(type), found \(found)")
        return found == "nil" ? DecodingError.valueNotFound(type, context) : DecodingError.typeMismatch(type, context)
    }

    static func kind(_ header: MessagePackCursor.Header) -> String {
        switch header {
        case .nil: "nil"
        case .bool: "a Boolean"
        case .int, .uint: "an integer"
        case .float, .double: "a float"
        case .string: "a string"
        case .binary: "binary data"
        case .array: "an array"
        case .map: "a map"
        case .extension(let type, _): type == -1 ? "a timestamp" : "an extension of type \(type)"
        }
    }
}

struct MessagePackSingleValueDecoder: SingleValueDecodingContainer {
    let decoder: MessagePackDecoderImpl
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var offset: Int { decoder.offset }
    private var path: PathNode? { decoder.path }

    func decodeNil() -> Bool { (try? decoder.isNil(at: offset)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.decodeBool(at: offset, path: path) }
    func decode(_ type: String.Type) throws -> String { try decoder.decodeString(at: offset, path: path) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.decodeFloatingPoint(at: offset, path: path) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.decodeFloatingPoint(at: offset, path: path) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.decodeInteger(at: offset, path: path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.decodeInteger(at: offset, path: path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(at: offset, as: type, path: path) }
}
