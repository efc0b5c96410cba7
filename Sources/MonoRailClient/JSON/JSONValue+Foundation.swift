import Foundation

extension JSONValue {
    /// Converts a Foundation property list (`[String: Any]`, what `JSONSerialization` returns and
    /// what Apic's `init(dictionary:)` takes) into a JSON value.
    ///
    /// Accepted: `nil` / `NSNull`, Booleans, integers, floating-point numbers, strings, `Date`s
    /// (written as ISO 8601 with fractional seconds), `URL`s, arrays and dictionaries of these.
    ///
    /// - Throws: ``APIError/Code/encodingFailed`` naming the path of the first value that is none of
    ///   these, or a number that is not finite.
    public init(foundation value: Any?) throws {
        self = try Self.convert(value, path: "$")
    }

    private static func convert(_ value: Any?, path: String) throws -> JSONValue {
        guard let value else { return .null }
        // Only a real NSNumber (JSONSerialization's) is read by its C type; asked of a Swift number,
        // `as? NSNumber` bridges, and on Apple platforms an NSNumber `1` also casts to `Bool`.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber { return try convert(number, path: path) }
        switch value {
        case is NSNull: return .null
        case let bool as Bool: return .bool(bool)
        case let int as Int: return .int(Int64(int))
        case let int as Int64: return .int(int)
        case let int as Int32: return .int(Int64(int))
        case let int as UInt: return .uint(UInt64(int))
        case let int as UInt64: return .uint(int)
        case let double as Double: return try finite(double, path: path)
        case let float as Float: return try finite(Double(float), path: path)
        case let string as String: return .string(string)
        case let date as Date: return .string(DateFormat.iso8601WithFractionalSeconds.string(from: date))
        case let url as URL: return .string(url.absoluteString)
        case let json as JSONValue: return json
        case let array as [Any?]:
            return .array(try array.enumerated().map { try convert($1, path: "\(path)[\($0)]") })
        case let object as [String: Any?]:
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(object.count)
            for (key, member) in object { members[key] = try convert(member, path: "\(path).\(key)") }
            return .object(members)
        default:
            throw APIError(.encodingFailed, "\(path) is a \(type(of: value)), which has no JSON form")
        }
    }

    /// An `NSNumber` from Objective-C or `JSONSerialization`: a Boolean, an integer or a double by
    /// the C type it holds.
    private static func convert(_ number: NSNumber, path: String) throws -> JSONValue {
        switch String(cString: number.objCType) {
        case "c", "B": return .bool(number.boolValue)
        case "f", "d": return try finite(number.doubleValue, path: path)
        case "Q", "L", "I", "S", "C": return .uint(number.uint64Value)
        default: return .int(number.int64Value)
        }
    }

    private static func finite(_ double: Double, path: String) throws -> JSONValue {
        guard double.isFinite else { throw APIError(.encodingFailed, "\(path) is \(double), which JSON cannot hold") }
        return .double(double)
    }
}

extension JSONValue {
    /// The value as a Foundation property list, what `JSONSerialization` would have made of it:
    /// `NSNull`, `Bool`, `Int64`, `UInt64`, `Double`, `String`, `[Any]` and `[String: Any]`. Objects'
    /// `var dictionary` and Apic's dictionaries are of this kind.
    public var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let bool): bool
        case .int(let int): int
        case .uint(let uint): uint
        case .double(let double): double
        case .string(let string): string
        case .array(let array): array.map(\.foundationValue)
        case .object(let object): object.mapValues(\.foundationValue)
        }
    }
}
