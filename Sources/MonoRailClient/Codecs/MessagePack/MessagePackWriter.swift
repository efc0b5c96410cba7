public import Foundation

/// Writes MessagePack in its smallest encoding for every value, as the reference implementation
/// (Python `msgpack`) does: non-negative integers in the unsigned forms, negative ones in the
/// smallest signed form, `float 64` for doubles, `str 8` and `bin` for short strings and bytes.
///
/// ```swift
/// var writer = MessagePackWriter()
/// writer.writeMapHeader(count: 1)
/// writer.write("company")
/// writer.write("MonoRail Co.")
/// let bytes = writer.data
/// ```
public struct MessagePackWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// Creates an empty writer.
    public init() {}

    /// Creates an empty writer with room for `capacity` bytes.
    public init(reservingCapacity capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// The bytes written so far, as `Data`.
    public var data: Data { Data(bytes) }

    /// Serializes one value.
    public static func serialize(_ value: MessagePackValue) -> Data {
        var writer = MessagePackWriter()
        writer.write(value)
        return writer.data
    }

    /// Serializes a JSON tree: the MessagePack body of a request whose JSON body would be `value`.
    public static func serialize(_ value: JSONValue) -> Data {
        var writer = MessagePackWriter()
        writer.write(value)
        return writer.data
    }

    // MARK: Scalars

    /// Writes `nil`.
    public mutating func writeNil() { bytes.append(0xc0) }

    /// Writes a Boolean.
    public mutating func write(_ value: Bool) { bytes.append(value ? 0xc3 : 0xc2) }

    /// Writes a signed integer in its smallest form; non-negative values use the unsigned forms.
    public mutating func write(_ value: Int64) {
        if value >= 0 { return write(UInt64(value)) }
        switch value {
        case -32..<0: bytes.append(UInt8(bitPattern: Int8(value)))
        case Int64(Int8.min) ..< -32: append(0xd0, Int8(value))
        case Int64(Int16.min)..<Int64(Int8.min): append(0xd1, Int16(value))
        case Int64(Int32.min)..<Int64(Int16.min): append(0xd2, Int32(value))
        default: append(0xd3, value)
        }
    }

    /// Writes an unsigned integer in its smallest form.
    public mutating func write(_ value: UInt64) {
        switch value {
        case 0...0x7f: bytes.append(UInt8(value))
        case 0x80...0xff: append(0xcc, UInt8(value))
        case 0x100...0xffff: append(0xcd, UInt16(value))
        case 0x1_0000...0xffff_ffff: append(0xce, UInt32(value))
        default: append(0xcf, value)
        }
    }

    /// Writes a `float 32`.
    public mutating func write(_ value: Float) { append(0xca, value.bitPattern) }

    /// Writes a `float 64`.
    public mutating func write(_ value: Double) { append(0xcb, value.bitPattern) }

    /// Writes a string.
    public mutating func write(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeHeader(count: utf8.count, fix: 0xa0, fixLimit: 31, forms: (0xd9, 0xda, 0xdb))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Writes binary data.
    public mutating func write(_ value: Data) {
        writeHeader(count: value.count, fix: nil, fixLimit: -1, forms: (0xc4, 0xc5, 0xc6))
        bytes.append(contentsOf: value)
    }

    /// Writes a timestamp in the smallest of its three forms.
    public mutating func write(_ value: MessagePackTimestamp) {
        writeExtension(type: -1, payload: value.payload)
    }

    /// Writes an extension value.
    public mutating func writeExtension(type: Int8, payload: some Collection<UInt8>) {
        let count = payload.count
        switch count {
        case 1: bytes.append(0xd4)
        case 2: bytes.append(0xd5)
        case 4: bytes.append(0xd6)
        case 8: bytes.append(0xd7)
        case 16: bytes.append(0xd8)
        case 0...0xff: append(0xc7, UInt8(count))
        case 0x100...0xffff: append(0xc8, UInt16(count))
        default: append(0xc9, UInt32(truncatingIfNeeded: count))
        }
        bytes.append(UInt8(bitPattern: type))
        bytes.append(contentsOf: payload)
    }

    // MARK: Containers

    /// Writes an array header; the `count` elements follow.
    public mutating func writeArrayHeader(count: Int) {
        writeHeader(count: count, fix: 0x90, fixLimit: 15, forms: (nil, 0xdc, 0xdd))
    }

    /// Writes a map header; `count` keys and values follow, alternating.
    public mutating func writeMapHeader(count: Int) {
        writeHeader(count: count, fix: 0x80, fixLimit: 15, forms: (nil, 0xde, 0xdf))
    }

    // MARK: Trees

    /// Writes a value and everything in it.
    public mutating func write(_ value: MessagePackValue) {
        switch value {
        case .nil: writeNil()
        case .bool(let value): write(value)
        case .int(let value): write(value)
        case .uint(let value): write(value)
        case .float(let value): write(value)
        case .double(let value): write(value)
        case .string(let value): write(value)
        case .binary(let value): write(value)
        case .array(let elements):
            writeArrayHeader(count: elements.count)
            for element in elements { write(element) }
        case .map(let pairs):
            writeMapHeader(count: pairs.count)
            for pair in pairs {
                write(pair.key)
                write(pair.value)
            }
        case .timestamp(let value): write(value)
        case .extension(let type, let data): writeExtension(type: type, payload: data)
        }
    }

    /// Writes a JSON tree. Object keys are written in sorted order, so the same tree always gives
    /// the same bytes.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeNil()
        case .bool(let value): write(value)
        case .int(let value): write(value)
        case .uint(let value): write(value)
        case .double(let value): write(value)
        case .string(let value): write(value)
        case .array(let elements):
            writeArrayHeader(count: elements.count)
            for element in elements { write(element) }
        case .object(let object):
            writeMapHeader(count: object.count)
            for key in object.keys.sorted() {
                write(key)
                if let member = object[key] { write(member) }
            }
        }
    }

    // MARK: Bytes

    private mutating func writeHeader(count: Int, fix: UInt8?, fixLimit: Int, forms: (UInt8?, UInt8, UInt8)) {
        if let fix, count <= fixLimit {
            bytes.append(fix | UInt8(count))
        } else if let form8 = forms.0, count <= 0xff {
            append(form8, UInt8(count))
        } else if count <= 0xffff {
            append(forms.1, UInt16(count))
        } else {
            append(forms.2, UInt32(truncatingIfNeeded: count))
        }
    }

    private mutating func append<T: FixedWidthInteger>(_ lead: UInt8, _ value: T) {
        bytes.append(lead)
        // Straight from the value's bytes: no array per number.
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
