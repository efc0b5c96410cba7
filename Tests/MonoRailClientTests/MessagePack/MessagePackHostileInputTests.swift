import Foundation
import MonoRailClient
import Testing

/// Every malformed input is a typed ``MessagePackError``: never a crash, a hang, or an allocation
/// sized by a length the body does not back.
@Suite("MessagePack hostile input")
struct MessagePackHostileInputTests {
    static let sample: MessagePackValue = [
        "company": "Zürich → 東京", "cars": 5, "speed": 46.8, "negative": -200, "big": .uint(1 << 40),
        "flag": true, "none": nil, "photo": .binary(Data([1, 2, 3])), "tags": ["a", "b", .float(1.5)],
        "built_at": .timestamp(MessagePackTimestamp(seconds: 1_763_789_275, nanoseconds: 5)),
        "ext": .extension(type: 9, data: Data([7, 7, 7])), "nested": [["deep": [1, 2, [3]]]],
    ]

    @Test("truncated at every byte of a valid message")
    func truncatedEverywhere() throws {
        let bytes = MessagePackWriter.serialize(Self.sample)
        #expect(try MessagePackReader().read(bytes) == Self.sample)
        for length in 0..<bytes.count {
            let error = #expect(throws: MessagePackError.self) { try MessagePackReader().read(bytes.prefix(length)) }
            #expect(error?.code == .truncated, "cut at \(length): \(String(describing: error))")
            #expect(throws: MessagePackError.self) { try MessagePackReader().readJSON(bytes.prefix(length)) }
        }
    }

    @Test(
        "lengths claiming more than the body has",
        arguments: [
            ("str 32 of 4 GiB", [0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]),
            ("bin 32 of 4 GiB", [0xc6, 0xff, 0xff, 0xff, 0xff, 0x00]),
            ("array 32 of 4 G elements", [0xdd, 0xff, 0xff, 0xff, 0xff, 0x01]),
            ("map 32 of 4 G pairs", [0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01]),
            ("array 16 of 65535", [0xdc, 0xff, 0xff, 0x01]),
            ("map 16 with one byte per pair", [0xde, 0x00, 0x02, 0x01, 0x01, 0x01]),
            ("ext 32 of 4 GiB", [0xc9, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00]),
            ("fixstr of 31 with 2 bytes", [0xbf, 0x61, 0x62]),
            ("fixarray of 15 with 1 element", [0x9f, 0x01]),
            ("fixext 16 with 3 bytes", [0xd8, 0x05, 0x01, 0x02, 0x03]),
            ("uint 64 with 3 bytes", [0xcf, 0x01, 0x02, 0x03]),
            ("float 64 with 7 bytes", [0xcb, 0, 0, 0, 0, 0, 0, 0]),
        ] as [(String, [UInt8])])
    func lyingLengths(_ name: String, _ bytes: [UInt8]) {
        let error = #expect(throws: MessagePackError.self, "\(name)") { try MessagePackReader().read(Data(bytes)) }
        #expect(error?.code == .truncated)
    }

    @Test("10,000-deep nesting is a typed error, not a stack overflow")
    func deepNesting() {
        for lead: UInt8 in [0x91, 0x81] {
            var bytes = [UInt8]()
            for _ in 0..<10_000 {
                bytes.append(lead)
                if lead == 0x81 {
                    bytes.append(0xa1)
                    bytes.append(0x6b)
                }  // key "k"
            }
            bytes.append(0xc0)
            let error = #expect(throws: MessagePackError.self) { try MessagePackReader().read(Data(bytes)) }
            #expect(error?.code == .tooDeep)
            #expect(throws: MessagePackError.self) { try MessagePackReader().readJSON(Data(bytes)) }
            #expect(throws: MessagePackError.self) {
                try MessagePackDecoder().decode(MessagePackValue.self, from: Data(bytes))
            }
        }
        // Within the limit it reads.
        var shallow = [UInt8](repeating: 0x91, count: 500)
        shallow.append(0x01)
        #expect(throws: Never.self) { try MessagePackReader().read(Data(shallow)) }
    }

    @Test(
        "invalid UTF-8 in a string",
        arguments: [
            [0xa1, 0xff], [0xa2, 0xc3, 0x28], [0xa3, 0xed, 0xa0, 0x80], [0xd9, 0x02, 0xe2, 0x82], [0xa2, 0xc0, 0xaf],
        ]
            as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        let error = #expect(throws: MessagePackError.self) { try MessagePackReader().read(Data(bytes)) }
        #expect(error?.code == .invalidUTF8)
        // As a map key too.
        let error2 = #expect(throws: MessagePackError.self) {
            try MessagePackReader().readJSON(Data([0x81] + bytes + [0x01]))
        }
        #expect(error2?.code == .invalidUTF8)
    }

    @Test("unknown extension types")
    func unknownExtensions() throws {
        // A MessagePackValue keeps them, including the negative (reserved) types.
        let ext = Data([0xd5, 0x80, 0x01, 0x02])  // fixext 2, type -128
        #expect(try MessagePackReader().read(ext) == .extension(type: -128, data: Data([1, 2])))
        // The JSON tree models decode from has no place for them: a typed error.
        let error = #expect(throws: MessagePackError.self) { try MessagePackReader().readJSON(ext) }
        #expect(error?.code == .unsupportedExtension)
        // Decoding one into a Swift type says why.
        struct Holder: Decodable { var payload: String }
        let map = Data([0x81, 0xa7] + Array("payload".utf8) + [0xd4, 0x07, 0x00])
        let decodingError = #expect(throws: DecodingError.self) {
            try MessagePackDecoder().decode(Holder.self, from: map)
        }
        guard case .dataCorrupted(let context)? = decodingError else {
            Issue.record("expected dataCorrupted, got \(String(describing: decodingError))")
            return
        }
        #expect((context.underlyingError as? MessagePackError)?.code == .unsupportedExtension)
        #expect(context.codingPath.map(\.stringValue) == ["payload"])
    }

    @Test("invalid timestamps, the reserved byte, trailing bytes and unsupported keys")
    func otherFailures() throws {
        let cases: [([UInt8], MessagePackError.Code)] = [
            ([0xd5, 0xff, 0x00, 0x00], .invalidTimestamp),  // 2-byte timestamp
            ([0xd7, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], .invalidTimestamp),  // nanoseconds > 999,999,999
            ([0xc7, 0x0c, 0xff, 0x3b, 0x9a, 0xca, 0x00, 0, 0, 0, 0, 0, 0, 0, 0], .invalidTimestamp),
            ([0xc1], .invalidByte),
            ([0x91, 0xc1], .invalidByte),
            ([0x01, 0x02], .trailingBytes),
        ]
        for (bytes, code) in cases {
            let error = #expect(throws: MessagePackError.self) { try MessagePackReader().read(Data(bytes)) }
            #expect(error?.code == code, "\(bytes)")
        }
        let arrayKey = Data([0x81, 0x90, 0x01])
        #expect(try MessagePackReader().read(arrayKey) == .map([MessagePackPair([], 1)]))
        let keyError = #expect(throws: MessagePackError.self) { try MessagePackReader().readJSON(arrayKey) }
        #expect(keyError?.code == .unsupportedKey)
    }

    @Test("random bytes never crash the reader")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        let valid = [UInt8](MessagePackWriter.serialize(Self.sample))
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                bytes = valid
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255) }
            }
            _ = try? MessagePackReader().read(Data(bytes))
            _ = try? MessagePackReader().readJSON(Data(bytes))
        }
    }

    /// 500 nested `map32` headers, each claiming as many pairs as the bytes after it could hold,
    /// followed by `padding` bytes of `nil`.
    static func lyingNestedMaps(levels: Int, padding: Int) -> Data {
        var bytes = [UInt8]()
        let total = levels * 7 + 1 + padding
        for _ in 0..<levels {
            let count = UInt32((total - bytes.count - 5) / 2)
            bytes += [0xdf] + withUnsafeBytes(of: count.bigEndian, Array.init) + [0xa1, 0x6b]
        }
        bytes += [UInt8](repeating: 0xc0, count: 1 + padding)
        return Data(bytes)
    }

    /// The process's peak virtual memory in bytes, from `/proc/self/status`.
    static func peakVirtualMemory() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmPeak:") }),
            let kilobytes = Int(line.dropFirst("VmPeak:".count).trimmingCharacters(in: .whitespaces).dropLast(3))
        else { return nil }
        return kilobytes * 1024
    }

    @Test("counts claimed at every nesting level reserve memory for the elements read, not the bytes left")
    func lyingCountsAtEveryLevel() throws {
        final class Nest: Decodable { let k: Nest? }
        let bytes = Self.lyingNestedMaps(levels: 500, padding: 1 << 20)
        // Reserving every claimed count reached 557 MB resident and 168 GB virtual for 10 MiB; the
        // peak virtual size is process-wide and only grows, so a bounded increase shows nothing
        // reserved per level.
        let before = try #require(Self.peakVirtualMemory())
        #expect(throws: MessagePackError.self) { try MessagePackReader().readJSON(bytes) }
        #expect(throws: MessagePackError.self) { try MessagePackReader().read(bytes) }
        #expect(throws: (any Error).self) { try MessagePackDecoder().decode(Nest.self, from: bytes) }
        let growth = try #require(Self.peakVirtualMemory()) - before
        #expect(growth < 1 << 30, "peak virtual memory grew by \(growth >> 20) MiB for a 1 MiB body")
    }

    @Test("NaN, infinities and far timestamps are decoding errors for Date and Decimal, naming the key")
    func unrepresentableDatesAndDecimals() throws {
        struct Stamp: Decodable { var at: Date }
        struct Price: Decodable { var amount: Decimal }
        let dates: [MessagePackValue] = [
            .double(.nan), .double(.infinity), .double(-.infinity), .float(.nan), .double(1e19), .uint(.max),
            .timestamp(MessagePackTimestamp(seconds: .max)), .timestamp(MessagePackTimestamp(seconds: .min)),
            .timestamp(MessagePackTimestamp(seconds: 253_402_300_800)), "10000-01-01T00:00:00Z",
        ]
        for value in dates {
            let error = #expect(throws: DecodingError.self, "\(value)") {
                try MessagePackDecoder().decode(Stamp.self, from: MessagePackWriter.serialize(["at": value]))
            }
            if case .dataCorrupted(let context)? = error {
                #expect(context.codingPath.map(\.stringValue) == ["at"], "\(value)")
            }
        }
        let decimals: [MessagePackValue] = [
            .double(.nan), .double(.infinity), .double(-.infinity), .float(.infinity), .double(1e300), "12abc", "-",
        ]
        for value in decimals {
            #expect(throws: DecodingError.self, "\(value)") {
                try MessagePackDecoder().decode(Price.self, from: MessagePackWriter.serialize(["amount": value]))
            }
        }
        let price = try MessagePackDecoder().decode(Price.self, from: MessagePackWriter.serialize(["amount": 46.8]))
        #expect(price.amount == Decimal(string: "46.8"))
        let stamp = try MessagePackDecoder().decode(
            Stamp.self, from: MessagePackWriter.serialize(["at": .timestamp(MessagePackTimestamp(seconds: 0))]))
        #expect(stamp.at == Date(timeIntervalSince1970: 0))
    }
}
