public import Foundation

/// Decodes `Decodable` values from a ``JSONValue`` tree or from JSON bytes.
///
/// Keys are mapped from Swift names to wire keys (``CodingOptions/keyMapping``), dates are read in the
/// listed formats, and every `DecodingError` carries a coding path of *wire* keys, so the JSON path in
/// an error message is the one in the payload (`$.trains[3].number_of_cars`).
///
/// ```swift
/// struct Train: Decodable { var company: String; var numberOfCars: Int }
/// let train = try ValueDecoder().decode(Train.self, from: #"{"company":"DB","number_of_cars":5}"#.data(using: .utf8)!)
/// ```
public struct ValueDecoder: Sendable {
    /// Key mapping, date formats and coercion.
    public var options: CodingOptions
    /// Values made available to `init(from:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]
    /// The parser used by ``decode(_:from:)-(_,Data)``.
    public var parser: JSONParser

    /// Creates a decoder.
    public init(options: CodingOptions = CodingOptions(), userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.options = options
        self.userInfo = userInfo
        self.parser = JSONParser()
    }

    /// Decodes a value from a tree.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - value: The tree to read.
    ///   - path: Where `value` sits in the whole payload; it prefixes coding paths in errors.
    /// - Returns: The decoded value.
    /// - Throws: `DecodingError` whose coding path holds wire keys.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, path: [WireKey] = []) throws -> T {
        let context = DecodingContext(options: options, userInfo: userInfo)
        var node: PathNode?
        for key in path { node = PathNode(parent: node, key: key) }
        return try ValueDecoderImpl(value: value, path: node, context: context).unbox(value, as: T.self, path: node)
    }

    /// Decodes a value from JSON bytes.
    ///
    /// The text is checked as ``parser`` checks it and decoded where it lies, without a tree
    /// (a `JSONTape`): the same values and errors as parsing first and decoding the tree, in a
    /// fraction of the time.
    ///
    /// - Throws: ``JSONSyntaxError`` for malformed JSON, `DecodingError` for a value of the wrong shape.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try data.withUnsafeBytes { raw in
            guard let tape = try JSONTape(raw.bindMemory(to: UInt8.self), maxDepth: parser.maxDepth) else {
                return try decode(type, from: try parser.parse(data))
            }
            defer { tape.close() }
            return try decode(type, from: tape, at: 0, path: [])
        }
    }

    /// Decodes the value at entry `index` of a tape; see ``decode(_:from:path:)``.
    package func decode<T: Decodable>(_ type: T.Type, from tape: JSONTape, at index: Int, path: [WireKey]) throws -> T {
        var node: PathNode?
        for key in path { node = PathNode(parent: node, key: key) }
        return try JSONTapeDecoder.decode(
            type, from: tape, at: index, prefix: node, context: DecodingContext(options: options, userInfo: userInfo))
    }
}

/// State shared by every container of one decode call.
final class DecodingContext {
    let options: CodingOptions
    let userInfo: [CodingUserInfoKey: any Sendable]
    let keys: WireKeyCache
    let isLenient: Bool
    // A context serves one call, or one batch of fields, on one thread, and no access to these
    // overlaps another: the runtime's exclusivity checks are left out.
    /// The ``KeyTable`` of each `CodingKey` type a tape decoder has met; `nil` for a dictionary's
    /// keys, which are data. Kept for the whole context, so records decoded one by one share them.
    @exclusivity(unchecked) private var tables: [(ObjectIdentifier, KeyTable?)] = []
    /// For a record read in place: where the field value read last ended (``FieldCoder/valueEnd``).
    @exclusivity(unchecked) var valueEnd = 0

    /// The key table of `Key`, made when first asked for.
    func table<Key: CodingKey>(for type: Key.Type) -> KeyTable? {
        let id = ObjectIdentifier(type)
        for (known, table) in tables where known == id { return table }
        // Table identities start at 1: 0 marks an object no table has tagged.
        let table = keys.isDictionaryKey(type) ? nil : KeyTable(id: UInt32(tables.count + 1))
        tables.append((id, table))
        return table
    }

    init(options: CodingOptions, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.options = options
        self.userInfo = userInfo
        self.keys = WireKeyCache(options.keyMapping)
        self.isLenient = options.coercion == .lenient
    }
}

final class ValueDecoderImpl: Decoder {
    let value: JSONValue
    let path: PathNode?
    let context: DecodingContext

    init(value: JSONValue, path: PathNode?, context: DecodingContext) {
        self.value = value
        self.path = path
        self.context = context
    }

    var codingPath: [any CodingKey] { PathNode.keys(of: path) }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw mismatch([String: JSONValue].self, value, path)
        }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(object: object, decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw mismatch([JSONValue].self, value, path)
        }
        return UnkeyedValueContainer(array: array, decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: - Unboxing

    func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: PathNode?) -> DecodingError {
        let found: String
        switch value {
        case .null: found = "null"
        case .bool(let bool): found = "the Boolean \(bool)"
        case .int(let int): found = "the number \(int)"
        case .uint(let uint): found = "the number \(uint)"
        case .double(let double): found = "the number \(double)"
        case .string(let string): found = "the string \"\(string.prefix(60))\""
        case .array: found = "an array"
        case .object: found = "an object"
        }
        if value.isNull {
            return .valueNotFound(
                type, .init(codingPath: PathNode.keys(of: path), debugDescription: "expected \(type), found null"))
        }
        return .typeMismatch(
            type, .init(codingPath: PathNode.keys(of: path), debugDescription: "expected \(type), found \(found)"))
    }

    func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, path: PathNode?) throws -> T {
        // Types with a wire representation of their own are read directly, never through init(from:).
        if type == String.self, let result = try unboxString(value, path) as? T { return result }
        if type == Int.self, let result = try unboxInteger(value, as: Int.self, path) as? T { return result }
        if type == Double.self, let result = try unboxDouble(value, path) as? T { return result }
        if type == Bool.self, let result = try unboxBool(value, path) as? T { return result }
        if type == Date.self, let result = try unboxDate(value, path) as? T { return result }
        if type == JSONValue.self, let result = value as? T { return result }
        if type == URL.self, let result = try unboxURL(value, path) as? T { return result }
        if type == Decimal.self, let result = try unboxDecimal(value, path) as? T { return result }
        if type == Data.self, let result = try unboxData(value, path) as? T { return result }
        // Arrays of strings (tags, names) are common fields; reading them here skips a container and
        // a generic call per element. Anything else in the array takes the general path, which
        // coerces or reports the element's path.
        if type == [String].self, case .array(let elements) = value {
            var strings: [String] = []
            strings.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let string) = element else { break }
                strings.append(string)
            }
            if strings.count == elements.count, let result = strings as? T { return result }
        }
        return try T(from: ValueDecoderImpl(value: value, path: path, context: context))
    }

    func unboxString(_ value: JSONValue, _ path: PathNode?) throws -> String {
        switch value {
        case .string(let string): return string
        case .int(let int) where context.isLenient: return String(int)
        case .uint(let uint) where context.isLenient: return String(uint)
        case .double(let double) where context.isLenient: return double.description
        case .bool(let bool) where context.isLenient: return bool ? "true" : "false"
        default: throw mismatch(String.self, value, path)
        }
    }

    func unboxInteger<I: FixedWidthInteger>(_ value: JSONValue, as type: I.Type, _ path: PathNode?) throws -> I {
        switch value {
        case .int(let int):
            if let exact = I(exactly: int) { return exact }
        case .uint(let uint):
            if let exact = I(exactly: uint) { return exact }
        // The parsers read every number whose value is a 64-bit integer (`1.0`, `25e2`) as `.int` or
        // `.uint`, so a `.double` is a fraction, an underflow such as `99e-99999999999`, or beyond 64
        // bits: refused in both modes. A lenient string is read by the same rule.
        case .string(let string) where context.isLenient:
            let trimmed = string.trimmingCharacters(in: .whitespaces)
            if let exact = I(trimmed) { return exact }
            if let number = try? JSONParser().parse(Data(trimmed.utf8)), number.isInteger {
                return try unboxInteger(number, as: type, path)
            }
        case .bool(let bool) where context.isLenient:
            return bool ? 1 : 0
        default:
            break
        }
        if let double = value.doubleValue {
            let problem =
                if case .double = value, double.rounded(.towardZero) != double || double.magnitude < 0x1p63 {
                    "is not an integer"
                } else {
                    "does not fit in \(I.self)"
                }
            throw DecodingError.dataCorrupted(
                .init(codingPath: PathNode.keys(of: path), debugDescription: "the number \(value) \(problem)"))
        }
        throw mismatch(I.self, value, path)
    }

    func unboxDouble(_ value: JSONValue, _ path: PathNode?) throws -> Double {
        switch value {
        case .double(let double): return double
        case .int(let int): return Double(int)
        case .uint(let uint): return Double(uint)
        case .string(let string) where context.isLenient:
            if let double = Double(string.trimmingCharacters(in: .whitespaces)), double.isFinite { return double }
        default: break
        }
        throw mismatch(Double.self, value, path)
    }

    func unboxFloat(_ value: JSONValue, _ path: PathNode?) throws -> Float {
        let double = try unboxDouble(value, path)
        let float = Float(double)
        guard float.isFinite else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: PathNode.keys(of: path), debugDescription: "the number \(double) does not fit in Float")
            )
        }
        return float
    }

    func unboxBool(_ value: JSONValue, _ path: PathNode?) throws -> Bool {
        switch value {
        case .bool(let bool): return bool
        case .int(let int) where context.isLenient && (int == 0 || int == 1): return int == 1
        case .string(let string) where context.isLenient:
            switch string.lowercased() {
            case "true", "1", "yes", "t", "y": return true
            case "false", "0", "no", "f", "n": return false
            default: break
            }
        default: break
        }
        throw mismatch(Bool.self, value, path)
    }

    func unboxDate(_ value: JSONValue, _ path: PathNode?) throws -> Date {
        switch value {
        case .string(let string):
            if let date = context.options.dateFormats.date(from: string) { return date }
            let formats = context.options.dateFormats.map(\.description).joined(separator: ", ")
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: PathNode.keys(of: path),
                    debugDescription:
                        "the date \"\(string.prefix(60))\" matches none of the formats (\(formats)) in the years 0000–9999"
                ))
        case .int, .uint, .double:
            let seconds = try unboxDouble(value, path)
            guard let date = DateFormat.date(secondsSince1970: seconds) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: PathNode.keys(of: path), debugDescription: DateFormat.unsupportedSeconds(seconds))
                )
            }
            return date
        default:
            throw mismatch(Date.self, value, path)
        }
    }

    func unboxURL(_ value: JSONValue, _ path: PathNode?) throws -> URL {
        let string = try unboxString(value, path)
        guard let url = URL(string: string) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: PathNode.keys(of: path), debugDescription: "\"\(string.prefix(60))\" is not a URL"))
        }
        return url
    }

    func unboxDecimal(_ value: JSONValue, _ path: PathNode?) throws -> Decimal {
        let text: String
        switch value {
        case .int(let int): return Decimal(int)
        case .uint(let uint): return Decimal(uint)
        // The shortest round-tripping description keeps "46.8" as 46.8 rather than 46.799999….
        case .double(let double): text = double.description
        // A decimal travels as a string wherever exactness matters (Pydantic, DRF's DecimalField,
        // MessagePack here): read in full, as MessagePack's is, with spaces around it only when lenient.
        case .string(let string): text = context.isLenient ? string.trimmingCharacters(in: .whitespaces) : string
        default: throw mismatch(Decimal.self, value, path)
        }
        guard let decimal = Decimal(exactly: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: PathNode.keys(of: path), debugDescription: "\(value) is not a number Decimal holds"))
        }
        return decimal
    }

    func unboxData(_ value: JSONValue, _ path: PathNode?) throws -> Data {
        let string = try unboxString(value, path)
        guard let data = Data(base64Encoded: string) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: PathNode.keys(of: path), debugDescription: "the string is not valid Base64"))
        }
        return data
    }
}

// MARK: - Single value

extension ValueDecoderImpl: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try unboxBool(value, path) }
    func decode(_ type: String.Type) throws -> String { try unboxString(value, path) }
    func decode(_ type: Double.Type) throws -> Double { try unboxDouble(value, path) }
    func decode(_ type: Float.Type) throws -> Float { try unboxFloat(value, path) }
    func decode(_ type: Int.Type) throws -> Int { try unboxInteger(value, as: type, path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unboxInteger(value, as: type, path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unboxInteger(value, as: type, path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unboxInteger(value, as: type, path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unboxInteger(value, as: type, path) }
    func decode(_ type: UInt.Type) throws -> UInt { try unboxInteger(value, as: type, path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unboxInteger(value, as: type, path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unboxInteger(value, as: type, path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unboxInteger(value, as: type, path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unboxInteger(value, as: type, path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type, path: path) }
}
