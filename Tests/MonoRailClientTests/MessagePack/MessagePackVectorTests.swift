import Foundation
import MonoRailClient
import Testing

/// Byte-exact interop with the reference implementation (Python `msgpack`): the vectors in
/// `Fixtures/MessagePack/vectors.json` were packed by it (`make-vectors.py` says how), and the
/// public msgpack-test-suite lists every valid encoding of each value, canonical first.
@Suite("MessagePack interop")
struct MessagePackVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var value: JSONValue
        var expected: JSONValue
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/MessagePack/vectors.json")
        guard let data = try? Data(contentsOf: url), let root = try? JSONParser().parse(data),
            let cases = root["cases"]?.arrayValue
        else { return [] }
        return cases.map { entry in
            Vector(name: entry["name"]?.stringValue ?? "?", value: entry["value"] ?? .null, expected: entry)
        }
    }()

    @Test("the reference vectors are present")
    func present() {
        #expect(Self.vectors.count == 96)
    }

    @Test("writes the reference implementation's bytes and reads them back", arguments: vectors)
    func vector(_ vector: Vector) throws {
        let value = try Self.build(vector.value)
        let bytes = MessagePackWriter.serialize(value)
        if let hex = vector.expected["hex"]?.stringValue {
            #expect(bytes.hexString == hex)
        } else {
            #expect(bytes.count == vector.expected["length"]?.intValue)
            #expect(bytes.prefix(16).hexString == vector.expected["head"]?.stringValue)
            #expect(Self.fnv1a64(bytes) == vector.expected["fnv1a64"]?.stringValue)
        }
        let read = try MessagePackReader().read(bytes)
        if vector.name == "nan" {
            guard case .double(let number) = read else { throw Failure("expected a double, read \(read)") }
            #expect(number.isNaN)
        } else {
            #expect(read == value)
        }
    }

    // MARK: msgpack-test-suite

    static let suiteCases: [Vector] = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/msgpack-test-suite/msgpack-test-suite.json")
        guard let data = try? Data(contentsOf: url), case .object(let groups)? = try? JSONParser().parse(data) else {
            return []
        }
        return groups.keys.sorted().flatMap { group in
            (groups[group]?.arrayValue ?? []).enumerated().map { index, entry in
                Vector(name: "\(group) #\(index)", value: entry, expected: entry["msgpack"] ?? .null)
            }
        }
    }()

    @Test("msgpack-test-suite is present")
    func suitePresent() {
        #expect(Self.suiteCases.count > 60, "expected Fixtures/msgpack-test-suite/msgpack-test-suite.json")
    }

    @Test("reads every encoding in msgpack-test-suite and writes the canonical one", arguments: suiteCases)
    func suite(_ entry: Vector) throws {
        let encodings = try #require(entry.expected.arrayValue).compactMap(\.stringValue)
        try #require(!encodings.isEmpty)
        for encoding in encodings {
            let bytes = try #require(Data(hex: encoding.replacingOccurrences(of: "-", with: "")))
            let read = try MessagePackReader().read(bytes)
            #expect(Self.matches(read, entry.value), "\(encoding) read as \(read)")
        }
        // What we write is one of the listed encodings and as small as the first (the suite lists
        // 2^63-1 as int 64 first; Python, and so MonoRail, writes uint 64, also 9 bytes).
        let first = try #require(Data(hex: encodings[0].replacingOccurrences(of: "-", with: "")))
        let written = MessagePackWriter.serialize(try MessagePackReader().read(first))
        #expect(encodings.map { $0.replacingOccurrences(of: "-", with: "") }.contains(written.hexString))
        #expect(written.count == first.count)
    }

    // MARK: Helpers

    /// Whether a value read from the suite equals the suite's description of it.
    static func matches(_ read: MessagePackValue, _ entry: JSONValue) -> Bool {
        guard case .object(let object) = entry else { return false }
        if let bignum = object["bignum"]?.stringValue {
            switch read {
            case .int(let number): return String(number) == bignum
            case .uint(let number): return String(number) == bignum
            case .float, .double: return number(read) == Double(bignum)
            default: return false
            }
        }
        for (key, expected) in object where key != "msgpack" {
            return matches(read, tag: key, expected)
        }
        return false
    }

    static func matches(_ read: MessagePackValue, tag: String, _ expected: JSONValue) -> Bool {
        switch (tag, read) {
        case ("nil", .nil): return true
        case ("bool", .bool(let value)): return expected == .bool(value)
        case ("binary", .binary(let data)):
            return data.hexString == expected.stringValue?.replacingOccurrences(of: "-", with: "")
        case ("number", _): return number(read) != nil && number(read) == expected.doubleValue
        case ("string", .string(let value)): return expected == .string(value)
        case ("array", .array(let elements)):
            guard let array = expected.arrayValue, array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { plain($0, $1) }
        case ("map", .map(let pairs)):
            guard case .object(let object) = expected, object.count == pairs.count else { return false }
            return pairs.allSatisfy { pair in
                guard let key = pair.key.stringValue, let value = object[key] else { return false }
                return plain(pair.value, value)
            }
        case ("timestamp", .timestamp(let timestamp)):
            return expected == .array([.int(timestamp.seconds), .int(Int64(timestamp.nanoseconds))])
        case ("ext", .extension(let type, let data)):
            return expected[0]?.intValue == Int(type)
                && expected[1]?.stringValue?.replacingOccurrences(of: "-", with: "") == data.hexString
        default: return false
        }
    }

    /// Elements of arrays and maps in the suite are plain JSON values.
    static func plain(_ read: MessagePackValue, _ expected: JSONValue) -> Bool {
        switch expected {
        case .null: read == .nil
        case .bool: matches(read, tag: "bool", expected)
        case .int, .uint, .double: matches(read, tag: "number", expected)
        case .string: matches(read, tag: "string", expected)
        case .array: matches(read, tag: "array", expected)
        case .object: matches(read, tag: "map", expected)
        }
    }

    static func number(_ value: MessagePackValue) -> Double? {
        switch value {
        case .int(let number): Double(number)
        case .uint(let number): Double(number)
        case .float(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// Rebuilds a value from the tagged description `make-vectors.py` writes.
    static func build(_ description: JSONValue) throws -> MessagePackValue {
        guard case .object(let object) = description, let (tag, value) = object.first, object.count == 1 else {
            throw Failure("bad description \(description)")
        }
        switch tag {
        case "nil": return .nil
        case "bool": return .bool(value.boolValue ?? false)
        case "int": return .int(try #require(Int64(value.stringValue ?? "")))
        case "uint": return .uint(try #require(UInt64(value.stringValue ?? "")))
        case "double": return .double(Double(bitPattern: try #require(UInt64(value.stringValue ?? "", radix: 16))))
        case "float": return .float(Float(bitPattern: try #require(UInt32(value.stringValue ?? "", radix: 16))))
        case "str": return .string(value.stringValue ?? "")
        case "bin": return .binary(try #require(Data(hex: value.stringValue ?? "")))
        case "array": return .array(try (value.arrayValue ?? []).map(build))
        case "map":
            return .map(
                try (value.arrayValue ?? []).map { pair in
                    MessagePackPair(try build(pair[0] ?? .null), try build(pair[1] ?? .null))
                })
        case "timestamp":
            let seconds = try #require(value[0].flatMap { if case .int(let n) = $0 { n } else { nil } })
            let nanoseconds = try #require(value[1]?.intValue)
            return .timestamp(MessagePackTimestamp(seconds: seconds, nanoseconds: UInt32(nanoseconds)))
        case "ext":
            return .extension(
                type: Int8(value[0]?.intValue ?? 0), data: try #require(Data(hex: value[1]?.stringValue ?? "")))
        case "repeat":
            return .array(Array(repeating: try build(value[0] ?? .null), count: value[1]?.intValue ?? 0))
        case "str_repeat":
            return .string(String(repeating: value[0]?.stringValue ?? "", count: value[1]?.intValue ?? 0))
        case "bin_repeat":
            let byte = try #require(Data(hex: value[0]?.stringValue ?? ""))
            return .binary(Data(repeating: byte[byte.startIndex], count: value[1]?.intValue ?? 0))
        case "int_map":
            return .map((0..<(value.intValue ?? 0)).map { MessagePackPair(.uint(UInt64($0)), "v") })
        case "ext_repeat":
            let byte = try #require(Data(hex: value[1]?.stringValue ?? ""))
            return .extension(
                type: Int8(value[0]?.intValue ?? 0),
                data: Data(repeating: byte[byte.startIndex], count: value[2]?.intValue ?? 0))
        default: throw Failure("unknown tag \(tag)")
        }
    }

    static func fnv1a64(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Data {
    init?(hex: String) {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let byte = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(byte)
        }
        self.init(bytes)
    }

    var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
