import Foundation
import MonoRailClient
import Testing

@Suite("MessagePack codable and boundaries")
struct MessagePackCodableTests {
    @Test(
        "integers take their smallest form at every boundary",
        arguments: [
            (0, "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"), (65535, "cdffff"),
            (65536, "ce00010000"), (4_294_967_295, "ceffffffff"), (4_294_967_296, "cf0000000100000000"),
            (Int64.max, "cf7fffffffffffffff"), (-1, "ff"), (-32, "e0"), (-33, "d0df"), (-128, "d080"),
            (-129, "d1ff7f"), (-32768, "d18000"), (-32769, "d2ffff7fff"), (Int64(Int32.min), "d280000000"),
            (Int64(Int32.min) - 1, "d3ffffffff7fffffff"), (Int64.min, "d38000000000000000"),
        ] as [(Int64, String)])
    func integerBoundaries(_ value: Int64, _ hex: String) throws {
        var writer = MessagePackWriter()
        writer.write(value)
        #expect(writer.data.hexString == hex)
        let read = try MessagePackReader().read(writer.data)
        #expect(read.int64Value == value)
        // Through Codable, into every width that holds it, and a typed error for those that don't.
        let encoded = try MessagePackEncoder().encode(value)
        #expect(encoded.hexString == hex)
        #expect(try MessagePackDecoder().decode(Int64.self, from: encoded) == value)
        if let narrow = Int8(exactly: value) {
            #expect(try MessagePackDecoder().decode(Int8.self, from: encoded) == narrow)
        } else {
            #expect(throws: DecodingError.self) { try MessagePackDecoder().decode(Int8.self, from: encoded) }
        }
        if value < 0 {
            #expect(throws: DecodingError.self) { try MessagePackDecoder().decode(UInt64.self, from: encoded) }
        }
    }

    @Test("UInt64 beyond Int64")
    func unsignedMaximum() throws {
        let encoded = try MessagePackEncoder().encode(UInt64.max)
        #expect(encoded.hexString == "cfffffffffffffffff")
        #expect(try MessagePackDecoder().decode(UInt64.self, from: encoded) == .max)
        #expect(throws: DecodingError.self) { try MessagePackDecoder().decode(Int64.self, from: encoded) }
        #expect(try MessagePackReader().readJSON(encoded) == .uint(.max))
    }

    @Test(
        "strings, binary, arrays and maps at their size boundaries",
        arguments: [0, 15, 16, 31, 32, 255, 256, 65535, 65536])
    func sizes(_ count: Int) throws {
        let string = String(repeating: "é", count: count / 2) + String(repeating: "a", count: count % 2)
        let values: [MessagePackValue] = [
            .string(string), .binary(Data(repeating: 0xab, count: count)),
            .array(Array(repeating: .nil, count: count)),
            .map((0..<count).map { MessagePackPair(.uint(UInt64($0)), .bool(true)) }),
        ]
        for value in values {
            #expect(try MessagePackReader().read(MessagePackWriter.serialize(value)) == value)
        }
        #expect(try MessagePackDecoder().decode(String.self, from: MessagePackEncoder().encode(string)) == string)
    }

    @Test("timestamps in all three sizes and Date")
    func timestamps() throws {
        let cases: [(MessagePackTimestamp, Int)] = [
            (MessagePackTimestamp(seconds: 1_763_789_275), 6),
            (MessagePackTimestamp(seconds: 1_763_789_275, nanoseconds: 123_456_789), 10),
            (MessagePackTimestamp(seconds: -1, nanoseconds: 500), 15),
            (MessagePackTimestamp(seconds: 1 << 34), 15),
        ]
        for (timestamp, size) in cases {
            let bytes = MessagePackWriter.serialize(.timestamp(timestamp))
            #expect(bytes.count == size)
            #expect(try MessagePackReader().read(bytes) == .timestamp(timestamp))
        }
        #expect(
            MessagePackTimestamp(seconds: 1_763_789_275, nanoseconds: 123_456_789).iso8601
                == "2025-11-22T05:27:55.123456789Z")
        #expect(MessagePackTimestamp(seconds: -1).iso8601 == "1969-12-31T23:59:59Z")
        #expect(MessagePackTimestamp(Date(timeIntervalSince1970: -.infinity)).seconds == .min)
        #expect(MessagePackTimestamp(Date(timeIntervalSince1970: .nan)).seconds == .max)
        #expect(MessagePackTimestamp(seconds: .min).iso8601.hasSuffix("Z"))
        #expect(MessagePackTimestamp(seconds: 951_782_400).iso8601 == "2000-02-29T00:00:00Z")
        // A Date round-trips to the microsecond through the extension, and through a JSON tree as ISO 8601.
        let date = Date(timeIntervalSince1970: 1_763_789_275.25)
        let encoded = try MessagePackEncoder().encode(date)
        #expect(try MessagePackDecoder().decode(Date.self, from: encoded) == date)
        #expect(try MessagePackReader().readJSON(encoded) == .string("2025-11-22T05:27:55.250000000Z"))
        #expect(try ValueDecoder().decode(Date.self, from: MessagePackReader().readJSON(encoded)) == date)
    }

    struct Depot: Codable, Equatable {
        var name: String
        var capacity: Int16
    }

    struct Train: Codable, Equatable {
        enum Kind: String, Codable { case electric, diesel }
        var id: Int
        var company: String?
        var numberOfCars: UInt8
        var maxSpeed: Double
        var ratio: Float
        var inService: Bool
        var builtAt: Date
        var photo: Data
        var homepage: URL
        var serial: UUID
        var price: Decimal
        var kind: Kind
        var tags: [String]
        var depot: Depot
        var counts: [String: Int]
        var byNumber: [Int: String]
        var free: MessagePackValue
    }

    static let train = Train(
        id: 7, company: nil, numberOfCars: 12, maxSpeed: 46.8, ratio: 0.5, inService: true,
        builtAt: Date(timeIntervalSince1970: 946_684_800), photo: Data([0xff, 0xd8]),
        homepage: URL(string: "https://example.com/t/7") ?? URL(filePath: "/"), serial: UUID(),
        price: Decimal(sign: .plus, exponent: -2, significand: 1234),
        kind: .electric, tags: ["fast", "electric"], depot: Depot(name: "Zürich", capacity: 40),
        counts: ["a": 1], byNumber: [3: "three"], free: ["x": .extension(type: 3, data: Data([1]))])

    @Test("a Codable model round-trips with snake_case keys")
    func roundTrip() throws {
        let encoder = MessagePackEncoder(keyMapping: .snakeCase)
        let bytes = try encoder.encode(Self.train)
        let tree = try MessagePackReader().read(bytes)
        #expect(tree["number_of_cars"] == .uint(12))
        #expect(tree["built_at"] == .timestamp(MessagePackTimestamp(seconds: 946_684_800)))
        #expect(tree["photo"] == .binary(Data([0xff, 0xd8])))
        #expect(tree["ratio"] == .float(0.5))
        #expect(tree["counts"]?["a"] == .uint(1))
        let decoded = try MessagePackDecoder(keyMapping: .snakeCase).decode(Train.self, from: bytes)
        #expect(decoded == Self.train)
    }

    @Test("shape errors name the path on the wire")
    func shapeErrors() throws {
        let bytes = try MessagePackEncoder(keyMapping: .snakeCase).encode(Self.train)
        guard case .map(var pairs) = try MessagePackReader().read(bytes),
            let index = pairs.firstIndex(where: { $0.key == "depot" })
        else { throw Failure("no depot") }
        pairs[index].value = ["name": "Z", "capacity": 70_000]
        let error = #expect(throws: DecodingError.self) {
            try MessagePackDecoder(keyMapping: .snakeCase).decode(
                Train.self, from: MessagePackWriter.serialize(.map(pairs)))
        }
        guard case .typeMismatch(_, let context)? = error else { throw Failure("\(String(describing: error))") }
        #expect(context.codingPath.map(\.stringValue) == ["depot", "capacity"])
        pairs.remove(at: index)
        let missing = #expect(throws: DecodingError.self) {
            try MessagePackDecoder(keyMapping: .snakeCase).decode(
                Train.self, from: MessagePackWriter.serialize(.map(pairs)))
        }
        guard case .keyNotFound(let key, _)? = missing else { throw Failure("\(String(describing: missing))") }
        #expect(key.stringValue == "depot")
    }

    @Test("a JSON tree writes as MessagePack and reads back the same")
    func jsonBridge() throws {
        let json: JSONValue = [
            "train": [
                "id": 1, "company": "MonoRail Co.", "max_speed": 46.8, "tags": ["a"], "depot": nil,
                "big": .uint(.max), "negative": -5,
            ]
        ]
        #expect(try MessagePackReader().readJSON(MessagePackWriter.serialize(json)) == json)
    }

    @Test("of repeated map keys the last counts, as in JSON and in the reference reader")
    func repeatedKeys() throws {
        struct Named: Decodable { var name: String }
        let bytes = MessagePackWriter.serialize(
            .map([MessagePackPair("name", "first"), MessagePackPair("name", "last")]))
        #expect(try MessagePackDecoder().decode(Named.self, from: bytes).name == "last")
        #expect(try MessagePackReader().readJSON(bytes) == ["name": "last"])
    }

    @Test("a double too large for Float does not fit, as in JSON decoding; infinity itself does")
    func floatRange() throws {
        #expect(throws: DecodingError.self) {
            try MessagePackDecoder().decode(
                Float.self, from: MessagePackWriter.serialize(MessagePackValue.double(1e300)))
        }
        #expect(
            try MessagePackDecoder().decode(
                Float.self, from: MessagePackWriter.serialize(MessagePackValue.double(.infinity)))
                == .infinity)
        #expect(
            try MessagePackDecoder().decode(Float.self, from: MessagePackWriter.serialize(MessagePackValue.double(0.5)))
                == 0.5)
    }
}

@Suite("MessagePackEncoder: superclass encoding")
struct MessagePackSuperEncoderTests {
    /// Encodes its superclass's part under `"super"`, though its keys have no such case.
    struct Child: Encodable {
        enum CodingKeys: String, CodingKey { case name }
        var name = "child"

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try "base".encode(to: container.superEncoder())
        }
    }

    @Test("superEncoder() with keys that have no \"super\" case writes a \"super\" member, as JSONEncoder does")
    func superEncoder() throws {
        let packed = try MessagePackReader().readJSON(try MessagePackEncoder().encode(Child()))
        let json = try JSONParser().parse(try JSONEncoder().encode(Child()))
        #expect(packed == ["name": "child", "super": "base"])
        #expect(packed == json)
    }
}
