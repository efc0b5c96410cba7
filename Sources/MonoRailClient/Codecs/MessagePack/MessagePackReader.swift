public import Foundation

/// Parses MessagePack bytes into a ``MessagePackValue``, or into the ``JSONValue`` tree that
/// envelopes and models decode from, so a MessagePack response is read exactly like a JSON one.
///
/// Every length is checked against the bytes that remain before anything is allocated, nesting is
/// bounded, strings are validated as UTF-8, and anything wrong is a ``MessagePackError``.
///
/// ```swift
/// let value = try MessagePackReader().read(body)
/// let json = try MessagePackReader().readJSON(body)  // what APIClient does for application/x-msgpack
/// ```
public struct MessagePackReader: Sendable {
    /// The deepest nesting of arrays and maps accepted.
    public var maxDepth: Int

    /// Creates a reader.
    public init(maxDepth: Int = 512) {
        self.maxDepth = maxDepth
    }

    /// Reads exactly one value.
    ///
    /// - Throws: ``MessagePackError`` for malformed input or bytes after the value.
    public func read(_ data: Data) throws(MessagePackError) -> MessagePackValue {
        try withCursor(data) { (cursor: inout MessagePackCursor) throws(MessagePackError) in
            try Self.value(&cursor, depth: 0, maxDepth: maxDepth)
        }
    }

    /// Reads exactly one value as a JSON tree.
    ///
    /// The mapping is the one a JSON body of the same data would give: binary becomes a Base64
    /// string (how `Data` travels in JSON), a timestamp an ISO 8601 string with nanoseconds, a
    /// `float 32` a double, and integer map keys their decimal text.
    ///
    /// - Throws: ``MessagePackError``; also ``MessagePackError/Code/unsupportedExtension`` for
    ///   extension types other than the timestamp, and ``MessagePackError/Code/unsupportedKey`` for
    ///   map keys that are not strings or integers.
    public func readJSON(_ data: Data) throws(MessagePackError) -> JSONValue {
        try withCursor(data) { (cursor: inout MessagePackCursor) throws(MessagePackError) in
            try Self.json(&cursor, depth: 0, maxDepth: maxDepth)
        }
    }

    private func withCursor<T>(
        _ data: Data, _ body: (inout MessagePackCursor) throws(MessagePackError) -> T
    ) throws(MessagePackError) -> T {
        let result: Result<T, MessagePackError> = data.withUnsafeBytes { raw in
            var cursor = MessagePackCursor(raw)
            do throws(MessagePackError) {
                let value = try body(&cursor)
                guard cursor.isAtEnd else {
                    throw cursor.error(.trailingBytes, "\(cursor.remaining) bytes follow the value")
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func value(_ cursor: inout MessagePackCursor, depth: Int, maxDepth: Int) throws(MessagePackError)
        -> MessagePackValue
    {
        let start = cursor.offset
        switch try cursor.header() {
        case .nil: return .nil
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(value)
        case .uint(let value): return .uint(value)
        case .float(let value): return .float(value)
        case .double(let value): return .double(value)
        case .string(let count): return .string(try cursor.string(count))
        case .binary(let count): return .binary(Data(cursor.take(count)))
        case .array(let count):
            guard depth < maxDepth else { throw cursor.error(.tooDeep, "nesting deeper than \(maxDepth)", at: start) }
            var array: [MessagePackValue] = []
            array.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count { array.append(try value(&cursor, depth: depth + 1, maxDepth: maxDepth)) }
            return .array(array)
        case .map(let count):
            guard depth < maxDepth else { throw cursor.error(.tooDeep, "nesting deeper than \(maxDepth)", at: start) }
            var pairs: [MessagePackPair] = []
            pairs.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count {
                let key = try value(&cursor, depth: depth + 1, maxDepth: maxDepth)
                pairs.append(MessagePackPair(key, try value(&cursor, depth: depth + 1, maxDepth: maxDepth)))
            }
            return .map(pairs)
        case .extension(let type, let count):
            let payload = cursor.take(count)
            guard type == -1 else { return .extension(type: type, data: Data(payload)) }
            guard let timestamp = MessagePackTimestamp.read(payload) else {
                throw cursor.error(.invalidTimestamp, "a timestamp of \(count) bytes is invalid", at: start)
            }
            return .timestamp(timestamp)
        }
    }

    package static func json(_ cursor: inout MessagePackCursor, depth: Int, maxDepth: Int) throws(MessagePackError)
        -> JSONValue
    {
        let start = cursor.offset
        switch try cursor.header() {
        case .nil: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(value)
        case .uint(let value): return value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
        // As the JSON parser reads `3.0`: a float that is exactly a 64-bit integer is that integer,
        // so a `.double` never stands for one and integer fields can refuse every `.double`.
        case .float(let value): return Int64(exactly: value).map(JSONValue.int) ?? .double(Double(value))
        case .double(let value): return Int64(exactly: value).map(JSONValue.int) ?? .double(value)
        case .string(let count): return .string(try cursor.string(count))
        case .binary(let count): return .string(Data(cursor.take(count)).base64EncodedString())
        case .array(let count):
            guard depth < maxDepth else { throw cursor.error(.tooDeep, "nesting deeper than \(maxDepth)", at: start) }
            var array: [JSONValue] = []
            array.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count { array.append(try json(&cursor, depth: depth + 1, maxDepth: maxDepth)) }
            return .array(array)
        case .map(let count):
            guard depth < maxDepth else { throw cursor.error(.tooDeep, "nesting deeper than \(maxDepth)", at: start) }
            // Not `reserveCapacity`, which is not specialized and looks up the storage's metadata
            // on every call.
            var object = [String: JSONValue](minimumCapacity: MessagePackCursor.initialCapacity(count))
            for _ in 0..<count {
                let key = try jsonKey(&cursor)
                object[key] = try json(&cursor, depth: depth + 1, maxDepth: maxDepth)
            }
            return .object(object)
        case .extension(let type, let count):
            guard type == -1 else {
                throw cursor.error(
                    .unsupportedExtension, "extension type \(type) has no JSON equivalent", at: start)
            }
            guard let timestamp = MessagePackTimestamp.read(cursor.take(count)) else {
                throw cursor.error(.invalidTimestamp, "a timestamp of \(count) bytes is invalid", at: start)
            }
            return .string(timestamp.iso8601)
        }
    }

    package static func jsonKey(_ cursor: inout MessagePackCursor) throws(MessagePackError) -> String {
        let start = cursor.offset
        switch try cursor.header() {
        case .string(let count): return try cursor.string(count)
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case let other:
            throw cursor.error(.unsupportedKey, "a map key must be a string or an integer, found \(other)", at: start)
        }
    }
}
