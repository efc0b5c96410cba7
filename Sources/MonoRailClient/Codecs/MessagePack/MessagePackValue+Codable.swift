import Foundation

/// `MessagePackValue` is Codable so it can be a free-form field. ``MessagePackEncoder`` and
/// ``MessagePackDecoder`` pass it through untouched; other coders (JSON) see the nearest JSON
/// shape, and the extensions JSON cannot carry fail to encode with a clear error.
extension MessagePackValue: Codable {
    /// Reads any value; maps, arrays and scalars come from the decoder's containers.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: WireKey.self) {
            self = .map(
                try container.allKeys.map { key in
                    MessagePackPair(.string(key.stringValue), try container.decode(MessagePackValue.self, forKey: key))
                })
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var elements: [MessagePackValue] = []
            while !container.isAtEnd { elements.append(try container.decode(MessagePackValue.self)) }
            self = .array(elements)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .nil
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = value < 0 ? .int(value) : .uint(UInt64(value))
        } else if let value = try? container.decode(UInt64.self) {
            self = .uint(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// Writes the value; an extension throws `EncodingError` outside MessagePack.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .nil:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value): try value.encode(to: encoder)
        case .int(let value): try value.encode(to: encoder)
        case .uint(let value): try value.encode(to: encoder)
        case .float(let value): try value.encode(to: encoder)
        case .double(let value): try value.encode(to: encoder)
        case .string(let value): try value.encode(to: encoder)
        case .binary(let value): try value.encode(to: encoder)
        case .timestamp(let value): try value.date.encode(to: encoder)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .map(let pairs):
            var container = encoder.container(keyedBy: WireKey.self)
            for pair in pairs {
                let key: String
                switch pair.key {
                case .string(let string): key = string
                case .int(let number): key = String(number)
                case .uint(let number): key = String(number)
                default:
                    throw EncodingError.invalidValue(
                        pair.key,
                        EncodingError.Context(
                            codingPath: encoder.codingPath,
                            debugDescription: "only string and integer keys have a JSON form"))
                }
                try container.encode(pair.value, forKey: WireKey(stringValue: key))
            }
        case .extension(let type, _):
            throw EncodingError.invalidValue(
                self,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription: "extension type \(type) has no form outside MessagePack"))
        }
    }
}
