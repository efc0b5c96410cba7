import Foundation
import TestServer
import Testing

@testable import MonoRailClient

/// The decoder that reads a tape against the one that reads the parser's tree: the same values or
/// the same errors for JSONTestSuite, for thousands of generated and damaged documents, in both
/// coercion modes, and for the odd corners of `Codable` (repeated keys, keys equal only as Swift
/// strings, nested and super decoders, a decoder kept past its call).
@Suite("JSON tape decoder")
struct JSONTapeDecoderTests {
    struct Stop: Codable, Equatable {
        var name: String
        var city: String?
        var capacity: Int
    }

    enum Traction: String, Codable { case electric, diesel }

    struct Record: Codable, Equatable {
        var id: Int
        var company: String
        var numberOfCars: Int8?
        var maxSpeed: Double
        var ratio: Float?
        var inService: Bool
        var builtAt: Date?
        var tags: [String]
        var depot: Stop?
        var traction: Traction?
        var site: URL?
        var price: Decimal?
        var blob: Data?
        var counts: [String: Int]?
        var grid: [[Int]]?
        var free: JSONValue?
        var big: UInt64?
        var stops: [Stop]?
    }

    struct Body: Codable, Equatable {
        var records: [Record]
        var total: Int?
    }

    /// Reads with every container kind by hand: nested containers, `allKeys`, `contains`,
    /// `decodeNil`, super decoders, and a single value container over the whole object.
    struct Handmade: Decodable, Equatable {
        var keys: [String]
        var first: String?
        var nested: [Int]
        var flag: Bool
        var inner: Int?
        var superID: Int?
        var raw: JSONValue

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            keys = container.allKeys.map(\.stringValue).sorted()
            first = try container.decodeIfPresent(String.self, forKey: AnyKey(stringValue: "first"))
            var list = try container.nestedUnkeyedContainer(forKey: AnyKey(stringValue: "list"))
            var nested: [Int] = []
            while !list.isAtEnd {
                if try list.decodeNil() { continue }
                nested.append(try list.decode(Int.self))
            }
            self.nested = nested
            flag = container.contains(AnyKey(stringValue: "flag"))
            if container.contains(AnyKey(stringValue: "inner")) {
                let inner = try container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(stringValue: "inner"))
                self.inner =
                    try inner.decodeNil(forKey: AnyKey(stringValue: "n"))
                    ? nil : try inner.decode(Int.self, forKey: AnyKey(stringValue: "n"))
            }
            let superDecoder = try container.superDecoder()
            superID = try? superDecoder.container(keyedBy: AnyKey.self).decode(
                Int.self, forKey: AnyKey(stringValue: "id"))
            raw = try decoder.singleValueContainer().decode(JSONValue.self)
        }
    }

    /// The tree's answer and the tape's: equal values, or errors that read the same.
    static func compare<T: Decodable & Equatable>(
        _ type: T.Type, _ data: Data, coercion: CodingOptions.Coercion = .strict
    ) -> (same: Bool, decoded: Bool, detail: String) {
        let decoder = ValueDecoder(options: CodingOptions(coercion: coercion))
        let tree = Result { try decoder.decode(type, from: try JSONParser().parse(data)) }
        let tape = Result { try decoder.decode(type, from: data) }
        switch (tree, tape) {
        case (.success(let a), .success(let b)): return (a == b, true, "\(a) vs \(b)")
        case (.failure(let a), .failure(let b)): return ("\(a)" == "\(b)", false, "\(a)\nvs\n\(b)")
        default: return (false, false, "\(tree) vs \(tape)")
        }
    }

    @Test("accepts, rejects and builds every JSONTestSuite file as the parser does")
    func suite() throws {
        for file in JSONParserTests.files {
            let data = try Data(contentsOf: JSONParserTests.suiteDirectory.appendingPathComponent(file))
            let result = Self.compare(JSONValue.self, data)
            #expect(result.same, "\(file): \(result.detail)")
        }
    }

    static let base = #"""
        {"records": [
          {"id": 1, "company": "Deutsche Bahn AG", "number_of_cars": 12, "max_speed": 230.5, "ratio": 0.25,
           "in_service": true, "built_at": "2015-12-30T12:12:33Z", "tags": ["ice", "\u00e9\ud83d\ude80"],
           "depot": {"name": "Rummelsburg", "city": "Berlin", "capacity": 40}, "traction": "electric",
           "site": "https://db.de/x", "price": 46.8, "blob": "AAEC", "counts": {"a": 1, "b": 2},
           "grid": [[1, 2], [], [3]], "free": {"k": [null, true, 1.5, "s"]}, "big": 18446744073709551615,
           "stops": [{"name": "A", "capacity": 1}, {"name": "B", "city": null, "capacity": 2}]},
          {"company": "SBB", "id": 2, "max_speed": 1E+2, "in_service": false, "tags": [], "number_of_cars": null,
           "note": "a \"quoted\"\\ line\n", "extra": {"deep": [[[]]]}, "built_at": 1450000000}
        ], "total": 2}
        """#

    @Test("decodes the base document as the tree does")
    func base() throws {
        let result = Self.compare(Body.self, Data(Self.base.utf8))
        #expect(result.same && result.decoded, "\(result.detail)")
    }

    @Test("gives the same values or errors for 3,000 generated records, in both coercion modes")
    func generated() async {
        await onOwnThread {
            var generator = SplitMix(state: 0x7A9E)
            let fields: [(String, [String])] = [
                ("id", ["1", "-4", "\"7\"", "1.0", "2.5", "1e2", "null", "true", "9223372036854775808"]),
                ("company", ["\"DB\"", "\"\\u00e9t\\u00e9\"", "5", "true", "null", "[]", "\"\""]),
                ("number_of_cars", ["12", "127", "128", "-129", "\"3\"", "null", "3.0"]),
                ("max_speed", ["230.5", "1", "\"2.5\"", "1e400", "-0.0", "null", "\"x\""]),
                ("ratio", ["0.5", "1e39", "3", "null"]),
                ("in_service", ["true", "false", "1", "0", "\"yes\"", "\"nope\"", "2", "null"]),
                ("built_at", ["\"2015-12-30T12:12:33Z\"", "\"2015-12-30\"", "1450000000", "1e300", "\"x\"", "null"]),
                ("tags", ["[]", "[\"a\",\"b\"]", "[\"a\", 1]", "[null]", "\"a\"", "{}"]),
                (
                    "depot",
                    [
                        "{\"name\":\"R\",\"capacity\":4}", "{\"name\":\"R\"}", "{\"name\":1,\"capacity\":4}", "null",
                        "[]",
                    ]
                ),
                ("traction", ["\"electric\"", "\"steam\"", "1", "null"]),
                ("site", ["\"https://x.y/z\"", "\"\"", "\"a b\"", "5"]),
                ("price", ["46.8", "1e-3", "\"12.50\"", "true", "12345678901234567890123"]),
                ("blob", ["\"AAEC\"", "\"!!\"", "7"]),
                ("counts", ["{\"a\":1,\"a\":2}", "{}", "{\"x\":\"1\"}", "[]"]),
                ("grid", ["[[1],[2,3]]", "[[1,\"2\"]]", "[1]", "[]"]),
                ("free", ["{\"k\":[1,{\"z\":null}]}", "\"s\"", "null"]),
                ("big", ["18446744073709551615", "-1", "1.5", "\"5\""]),
                ("stops", ["[{\"name\":\"A\",\"capacity\":1}]", "[{\"name\":\"A\"}]", "[{}]", "{}"]),
                ("unknown", ["{\"deep\":[[{}]]}", "1"]),
            ]
            var decodedCount = 0
            for round in 0..<3000 {
                var members: [String] = []
                for (key, values) in fields {
                    // Mostly present, sometimes missing, sometimes twice (the last counts, as in the tree).
                    let roll = Int.random(in: 0..<10, using: &generator)
                    if roll == 0 && key != "id" { continue }
                    let count = roll == 9 ? 2 : 1
                    for _ in 0..<count {
                        // The first value of each list fits; most records should decode.
                        let value =
                            Int.random(in: 0..<4, using: &generator) > 0
                            ? values[0] : values.randomElement(using: &generator) ?? "null"
                        members.append("\"\(key)\": \(value)")
                    }
                }
                members.shuffle(using: &generator)
                let text = "{\"records\": [{" + members.joined(separator: ", ") + "}], \"total\": 1}"
                let coercion: CodingOptions.Coercion = round % 2 == 0 ? .strict : .lenient
                let result = Self.compare(Body.self, Data(text.utf8), coercion: coercion)
                if result.decoded { decodedCount += 1 }
                #expect(result.same, "\(text)\n\(result.detail)")
            }
            // Both outcomes are exercised.
            #expect(decodedCount > 50 && decodedCount < 2950, "\(decodedCount)")
        }
    }

    @Test("gives the same values or errors for 2,000 damaged documents")
    func damaged() async {
        await onOwnThread {
            let document = Array(Self.base.utf8)
            let alphabet = Array(#"{}[]":,\ -+.eE0123456789tfnulrsa"#.utf8) + [0x00, 0x80, 0xC3, 0xE2, 0xFF]
            var generator = SplitMix(state: 0x7A9F)
            var decodedCount = 0
            for round in 0..<2000 {
                var bytes = document
                for _ in 0..<Int.random(in: 1...2, using: &generator) {
                    let position = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                    case 1: bytes.remove(at: position)
                    case 2: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                    default: bytes.removeSubrange(position...)
                    }
                    if bytes.isEmpty { break }
                }
                let coercion: CodingOptions.Coercion = round % 2 == 0 ? .strict : .lenient
                let result = Self.compare(Body.self, Data(bytes), coercion: coercion)
                if result.decoded { decodedCount += 1 }
                #expect(result.same, "\(String(decoding: bytes, as: UTF8.self))\n\(result.detail)")
            }
            #expect(decodedCount > 20, "\(decodedCount)")
        }
    }

    @Test("the client layer's envelopes read from a tape as from the tree: values, side-loads and errors")
    func envelopes() {
        let documents = [
            #"{"data": {"stop": {"name": "A", "capacity": 1}, "meta": {"n": 1}, "stop": {"name": "B", "capacity": 2}}}"#,
            #"{"data": {"stops": [{"name": "A", "capacity": 1}], "total": 1}}"#,
            #"{"data": {"errors": {"name": ["is taken"]}}}"#,
            #"{"data": {"stop": {"errors": {"name": ["bad"]}}, "x": 1}}"#,
        ]
        var generator = SplitMix(state: 0xE7E1)
        let alphabet = Array(#"{}[]":,\ -.0123456789tfnulae"#.utf8)
        var outcomes = (same: 0, failed: 0)
        for round in 0..<1_200 {
            var bytes = Array(documents[round % documents.count].utf8)
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !bytes.isEmpty {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                }
            }
            let body = Data(bytes)
            let decoder = ResponseDecoder(envelope: EnvelopeStyle(rootNamespace: "data"))
            let roots = round % 2 == 0 ? ["stop"] : ["stops"]
            func summary<T>(_ envelope: Envelope<T>) -> String {
                "\(envelope.value) \(envelope.sideloaded.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"
            }
            func read<T: Decodable>(_ type: T.Type) -> (
                tape: Result<String, any Error>, tree: Result<String, any Error>
            ) {
                (
                    Result { summary(try decoder.decode(type, from: body, roots: roots)) },
                    Result {
                        summary(try decoder.decode(type, from: try decoder.parse(body), rawBody: body, roots: roots))
                    }
                )
            }
            let (tape, tree) = roots == ["stop"] ? read(Stop.self) : read([Stop].self)
            switch (tape, tree) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "\(String(decoding: bytes, as: UTF8.self))")
                outcomes.same += 1
            case (.failure(let a as APIError), .failure(let b as APIError)):
                #expect(a.code == b.code && a.message == b.message, "\(String(decoding: bytes, as: UTF8.self))")
                #expect(a.parsedBody == b.parsedBody)
                outcomes.failed += 1
            default:
                Issue.record("\(String(decoding: bytes, as: UTF8.self)): tape \(tape), tree \(tree)")
            }
        }
        #expect(outcomes.same > 100 && outcomes.failed > 100, "\(outcomes)")
    }

    @Test("keeps the last of repeated keys, and matches keys as Swift strings do")
    func keys() throws {
        let documents = [
            #"{"name": "a", "capacity": 1, "name": "b"}"#,
            #"{"name": "a", "capacity": 1, "capacity": 2, "name": "b", "city": "c", "city": null}"#,
            // An escaped key, and one equal to "city" only after its escape is read.
            #"{"n\u0061me": "escaped", "capacity": 3, "\u0063ity": "c"}"#,
            // U+212A KELVIN SIGN is canonically equivalent to "K", so the tree's dictionary finds it under "K".
            #"{"name": "x", "capacity": 1, "city": "y", "\u212A": 5}"#,
        ]
        for document in documents {
            let result = Self.compare(Stop.self, Data(document.utf8))
            #expect(result.same && result.decoded, "\(document): \(result.detail)")
        }
        struct Kelvin: Decodable, Equatable {
            var k: Int
            enum CodingKeys: String, CodingKey { case k = "K" }
        }
        let kelvin = Data(#"{"K": 1, "\#u{212A}": 2}"#.utf8)
        let identity = ValueDecoder(options: CodingOptions(keyMapping: .identity))
        #expect(try identity.decode(Kelvin.self, from: kelvin) == Kelvin(k: 2))
        #expect(try identity.decode(Kelvin.self, from: identity.parser.parse(kelvin)) == Kelvin(k: 2))
        // Several records with their keys in changing orders, repeated and missing.
        let shuffled = Data(
            #"""
            [{"name": "a", "capacity": 1}, {"capacity": 2, "name": "b"}, {"name": "c", "capacity": 3, "capacity": 4},
             {"city": "x", "name": "d", "capacity": 5}, {"name": "e", "capacity": 6, "city": "y", "name": "f"}]
            """#.utf8)
        let stops = try ValueDecoder().decode([Stop].self, from: shuffled)
        #expect(stops.map(\.name) == ["a", "b", "c", "d", "f"])
        #expect(stops.map(\.capacity) == [1, 2, 4, 5, 6])
        #expect(Self.compare([Stop].self, shuffled).same)
    }

    @Test("reads nested, super and single value containers as the tree does")
    func handmade() {
        let documents = [
            #"{"first": "x", "list": [1, null, 2], "flag": false, "inner": {"n": 3}, "super": {"id": 9}}"#,
            #"{"list": [], "inner": {"n": null}}"#,
            #"{"list": [1, "2"]}"#,
            #"{"first": 1, "list": []}"#,
            #"{"list": {}}"#,
            #"{"list": [], "inner": []}"#,
            #"[1]"#,
        ]
        for document in documents {
            let result = Self.compare(Handmade.self, Data(document.utf8))
            #expect(result.same, "\(document): \(result.detail)")
        }
    }

    @Test("a decoder kept past its call fails with an error instead of reading freed memory")
    func keptDecoder() throws {
        final class Keeper: Decodable {
            nonisolated(unsafe) static var kept: (any Decoder)?
            init(from decoder: any Decoder) throws { Self.kept = decoder }
        }
        _ = try ValueDecoder().decode(Keeper.self, from: Data(#"{"a": [1, 2]}"#.utf8))
        let kept = try #require(Keeper.kept)
        #expect(throws: DecodingError.self) { try kept.container(keyedBy: JSONTapeDecoderTests.Handmade.AnyKey.self) }
        #expect(throws: DecodingError.self) { try kept.singleValueContainer().decode(Int.self) }
        Keeper.kept = nil
    }

    @Test("a tape refilled for the next value is closed to decoders made for the last")
    func refilledTape() throws {
        final class Keeper: Decodable {
            nonisolated(unsafe) static var kept: (any Decoder)?
            nonisolated(unsafe) static var readKept: Result<Int, any Error>?
            init(from decoder: any Decoder) throws {
                if let kept = Self.kept {
                    // The tape is open again, for this value: the earlier decoder must not read it.
                    Self.readKept = Result { try kept.singleValueContainer().decode(Int.self) }
                } else {
                    Self.kept = decoder
                }
            }
        }
        let coder = FieldCoder(options: CodingOptions())
        let body = Array(#"[7, 8]"#.utf8)
        try body.withUnsafeBufferPointer { bytes in
            var cursor = JSONCursor(bytes, offset: 1, maxDepth: 8)
            _ = try coder.decode(Keeper.self, fromJSONAt: &cursor, depth: 1)
            cursor.offset = 4
            _ = try coder.decode(Keeper.self, fromJSONAt: &cursor, depth: 1)
        }
        #expect(throws: DecodingError.self) { try Keeper.readKept?.get() }
        #expect(Keeper.readKept != nil)
        Keeper.kept = nil
    }

    @Test("reports paths through arrays and objects as the tree does")
    func paths() throws {
        let data = Data(
            #"""
            {"records": [{"id": 1, "company": "x", "max_speed": 1, "in_service": true, "tags": []},
             {"id": 2, "company": "y", "max_speed": 1, "in_service": true, "tags": [], "stops": [{"name": "a"}]}]}
            """#.utf8)
        let result = Self.compare(Body.self, data)
        #expect(result.same && !result.decoded, "\(result.detail)")
        #expect(result.detail.contains("records"))
        let error = #expect(throws: DecodingError.self) { try ValueDecoder().decode(Body.self, from: data) }
        guard case .keyNotFound(let key, let context)? = error else {
            Issue.record("\(error)")
            return
        }
        #expect(key.stringValue == "capacity")
        #expect(WireKey.jsonPath(context.codingPath) == "$.records[1].stops[0]")
    }
}
