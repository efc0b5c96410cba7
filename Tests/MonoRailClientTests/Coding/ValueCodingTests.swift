import Foundation
import MonoRailClient
import Testing

struct Depot: Codable, Equatable, Sendable {
    var name: String
    var city: String
    var capacity: Int
}

struct Train: Codable, Equatable, Sendable {
    var id: Int?
    var company: String
    var numberOfCars: Int
    var maxSpeed: Double
    var inService: Bool
    var builtAt: Date
    var tags: [String]
    var depot: Depot
    var conductorID: Int?
}

enum Status: String, Codable, Sendable { case active, retired }

struct Kitchen: Codable, Equatable, Sendable {
    var int8: Int8
    var uint16: UInt16
    var int64: Int64
    var uint64: UInt64
    var float: Float
    var decimal: Decimal
    var url: URL
    var uuid: UUID
    var status: Status
    var dictionary: [String: Int]
    var free: JSONValue
    var optional: String?
    var data: Data
}

@Suite("Value coding")
struct ValueCodingTests {
    let trainJSON = #"""
        {"id": 7, "company": "DB", "number_of_cars": 5, "max_speed": 46.8, "in_service": true,
         "built_at": "2015-12-30T12:12:33.000Z", "tags": ["a", "b"],
         "depot": {"name": "Rummelsburg", "city": "Berlin", "capacity": 40}, "conductor_id": 12}
        """#

    @Test(
        "maps camelCase properties to snake_case keys, acronyms included",
        arguments: [
            ("numberOfCars", "number_of_cars"), ("userID", "user_id"), ("URLString", "url_string"),
            ("id", "id"), ("number_of_cars", "number_of_cars"), ("httpURLPath2", "http_url_path2"),
            ("a", "a"), ("ABC", "abc"),
        ])
    func snakeCase(name: String, expected: String) {
        #expect(KeyMapping.snakeCased(name) == expected)
    }

    @Test("decodes snake_case JSON into camelCase properties")
    func decodesSnakeCase() throws {
        let train = try ValueDecoder().decode(Train.self, from: Data(trainJSON.utf8))
        #expect(train.numberOfCars == 5)
        #expect(train.conductorID == 12)
        #expect(train.depot.city == "Berlin")
        #expect(train.builtAt == Date(timeIntervalSince1970: 1_451_477_553))
    }

    @Test("encodes camelCase properties as snake_case keys and round-trips")
    func encodesSnakeCase() throws {
        let train = try ValueDecoder().decode(Train.self, from: Data(trainJSON.utf8))
        let encoded = try ValueEncoder().encode(train)
        #expect(encoded["number_of_cars"] == 5)
        #expect(encoded["conductor_id"] == 12)
        #expect(encoded["built_at"] == "2015-12-30T12:12:33.000Z")
        #expect(encoded["numberOfCars"] == nil)
        let again = try ValueDecoder().decode(Train.self, from: encoded)
        #expect(again == train)
    }

    @Test("explicit snake_case coding keys work unchanged under snake_case mapping")
    func explicitKeysAreIdempotent() throws {
        struct Explicit: Codable, Equatable {
            var numberOfCars: Int
            enum CodingKeys: String, CodingKey { case numberOfCars = "number_of_cars" }
        }
        let value = try ValueDecoder().decode(Explicit.self, from: Data(#"{"number_of_cars": 3}"#.utf8))
        #expect(value.numberOfCars == 3)
        #expect(try ValueEncoder().encode(value) == ["number_of_cars": 3])
    }

    @Test("identity and custom key mappings")
    func otherMappings() throws {
        struct Simple: Codable { var numberOfCars: Int }
        var options = CodingOptions(keyMapping: .identity)
        #expect(
            try ValueDecoder(options: options).decode(Simple.self, from: Data(#"{"numberOfCars": 1}"#.utf8))
                .numberOfCars == 1)
        options.keyMapping = .custom { $0.uppercased() }
        #expect(
            try ValueDecoder(options: options).decode(Simple.self, from: Data(#"{"NUMBEROFCARS": 2}"#.utf8))
                .numberOfCars == 2)
        #expect(try ValueEncoder(options: options).encode(Simple(numberOfCars: 3)) == ["NUMBEROFCARS": 3])
    }

    @Test("decodes every field type")
    func kitchenSink() throws {
        let json = #"""
            {"int8": -128, "uint16": 65535, "int64": -9223372036854775808, "uint64": 18446744073709551615,
             "float": 1.5, "decimal": 46.8, "url": "https://example.com/a?b=c",
             "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "status": "retired",
             "dictionary": {"a": 1, "b_c": 2, "camelKey": 3}, "free": {"nested": [1, "two", null]}, "optional": null,
             "data": "AAEC"}
            """#
        let kitchen = try ValueDecoder().decode(Kitchen.self, from: Data(json.utf8))
        #expect(kitchen.int8 == -128)
        #expect(kitchen.uint16 == 65535)
        #expect(kitchen.int64 == .min)
        #expect(kitchen.uint64 == .max)
        #expect(kitchen.decimal == Decimal(string: "46.8"))
        #expect(kitchen.url.host == "example.com")
        #expect(kitchen.status == .retired)
        #expect(kitchen.dictionary == ["a": 1, "b_c": 2, "camelKey": 3], "dictionary keys are data and never mapped")
        #expect(kitchen.free == ["nested": [1, "two", nil]])
        #expect(kitchen.optional == nil)
        #expect(kitchen.data == Data([0, 1, 2]))
        #expect(try ValueEncoder().encode(kitchen)["dictionary"]?["camelKey"] == 3)
        let again = try ValueDecoder().decode(Kitchen.self, from: try ValueEncoder().encode(kitchen))
        #expect(again == kitchen)
    }

    @Test(
        "tries date formats in order",
        arguments: [
            ("2015-12-30T12:12:33Z", 1_451_477_553.0),
            ("2015-12-30T12:12:33.250Z", 1_451_477_553.25),
            ("2015-12-30T18:12:33.000-05:00", 1_451_517_153.0),
            ("2015-12-30T18:12:33.000-0500", 1_451_517_153.0),
            ("2015-12-30T13:12:33+01:00", 1_451_477_553.0),
            ("2000-02-29T00:00:00Z", 951_782_400.0),
        ])
    func dateFormats(text: String, seconds: Double) throws {
        let date = try ValueDecoder().decode(Date.self, from: .string(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test("a custom date format can be added to the list")
    func customDateFormat() throws {
        let options = CodingOptions(dateFormats: DateFormat.defaults + [.custom("yyyy/MM/dd HH:mm:ss Z")])
        let date = try ValueDecoder(options: options).decode(Date.self, from: .string("2015/12/30 12:12:33 +0000"))
        #expect(date.timeIntervalSince1970 == 1_451_477_553)
        #expect(throws: DecodingError.self) {
            try ValueDecoder().decode(Date.self, from: .string("2015/12/30 12:12:33 +0000"))
        }
    }

    @Test("an ISO date without fractional seconds does not match the fractional format, and vice versa")
    func strictFormats() {
        #expect(DateFormat.iso8601WithFractionalSeconds.date(from: "2015-12-30T12:12:33Z") == nil)
        #expect(DateFormat.iso8601.date(from: "2015-12-30T12:12:33.5Z") == nil)
        #expect(DateFormat.rails.date(from: "2015-12-30T12:12:33.000+01:00") == nil)
        #expect(DateFormat.rails.date(from: "2015-12-30T12:12:33.000+0100") != nil)
        #expect(DateFormat.iso8601.date(from: "2015-02-30T12:12:33Z") == nil)
        #expect(
            DateFormat.rails.string(from: Date(timeIntervalSince1970: 1_451_477_553.25))
                == "2015-12-30T12:12:33.250+0000")
    }

    @Test("a date alone and a date-time without an offset decode by default, as UTC; each format keeps to its own")
    func datesAsAPIsSendThem() throws {
        let decoder = ValueDecoder()
        #expect(try decoder.decode(Date.self, from: "1968-11-01").timeIntervalSince1970 == -36_806_400)
        #expect(try decoder.decode(Date.self, from: "0000-01-01") == DateFormat.supportedRange.lowerBound)
        #expect(try decoder.decode(Date.self, from: "2024-05-06T07:08:09").timeIntervalSince1970 == 1_714_979_289)
        let micro = try decoder.decode(Date.self, from: "2024-05-06T07:08:09.123456")
        #expect(abs(micro.timeIntervalSince1970 - 1_714_979_289.123456) < 0.000_001)
        for bad: JSONValue in ["1968-11-31", "1968-13-01", "1968-11-1", "1968-11-01T", "1968-11-01 ", "68-11-01"] {
            #expect(throws: DecodingError.self, "\(bad)") { try decoder.decode(Date.self, from: bad) }
        }
        #expect(DateFormat.dateOnly.date(from: "2024-05-06T07:08:09Z") == nil)
        #expect(DateFormat.withoutTimeZone.date(from: "2024-05-06T07:08:09Z") == nil)
        #expect(DateFormat.withoutTimeZone.date(from: "2024-05-06") == nil)
        #expect(DateFormat.iso8601.date(from: "2024-05-06T07:08:09") == nil)
        #expect(DateFormat.iso8601.date(from: "2024-05-06") == nil)
        #expect(DateFormat.rails.date(from: "2024-05-06T07:08:09.000") == nil)
        let date = Date(timeIntervalSince1970: 1_714_979_289.25)
        #expect(DateFormat.dateOnly.string(from: date) == "2024-05-06")
        #expect(DateFormat.withoutTimeZone.string(from: date) == "2024-05-06T07:08:09.250")
        #expect(DateFormat.dateOnly.string(from: Date(timeIntervalSince1970: -1)) == "1969-12-31")
        // The day the instant falls in, though its milliseconds round up into the next.
        #expect(DateFormat.dateOnly.string(from: Date(timeIntervalSince1970: -0.0004)) == "1969-12-31")
    }

    @Test("a decoding error names the wire key and the JSON path")
    func errorPath() throws {
        let json = #"{"trains": [{"id": 1, "company": "DB", "number_of_cars": "many"}]}"#
        struct Wrapper: Decodable { var trains: [Train] }
        do {
            _ = try ValueDecoder().decode(Wrapper.self, from: Data(json.utf8))
            Issue.record("expected a failure")
        } catch let error as DecodingError {
            guard case .typeMismatch(_, let context) = error else {
                Issue.record("expected a type mismatch, got \(error)")
                return
            }
            #expect(WireKey.jsonPath(context.codingPath) == "$.trains[0].number_of_cars")
            #expect(context.debugDescription.contains("found the string \"many\""))
        }
    }

    @Test("a missing key is reported with its wire name")
    func missingKey() {
        do {
            _ = try ValueDecoder().decode(Depot.self, from: ["name": "x", "city": "y"])
            Issue.record("expected a failure")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "capacity")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(
        "strict coercion rejects, lenient coercion converts",
        arguments: [
            (JSONValue.string("5"), 5),
            (JSONValue.string(" 12 "), 12),
            (JSONValue.string("3.0"), 3),
            (JSONValue.string("25e-1e"), nil),
            (JSONValue.bool(true), 1),
        ] as [(JSONValue, Int?)])
    func lenientIntegers(input: JSONValue, expected: Int?) throws {
        let lenient = ValueDecoder(options: CodingOptions(coercion: .lenient))
        if let expected {
            #expect(try lenient.decode(Int.self, from: input) == expected)
        } else {
            #expect(throws: DecodingError.self) { try lenient.decode(Int.self, from: input) }
        }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Int.self, from: input) }
    }

    @Test(
        "an integer field takes a literal exactly when it spells an integer that fits",
        arguments: [
            ("1.0", Int64(1)), ("1e2", 100), ("25e-1", nil), ("1.5e1", 15), ("0.00e5", 0), ("-0.0", 0),
            ("99e-99999999999", nil), ("1.00000000000000000001", nil), ("-9223372036854775809", nil),
            ("-9223372036854775808.0", .min), ("9223372036854775807e0", .max), ("9223372036854775808", nil),
            ("92233720368547758.07e2", .max), ("1e19", nil), ("12e18", nil), ("100000000000000000000e-20", 1),
        ] as [(String, Int64?)])
    func integerLiterals(literal: String, expected: Int64?) throws {
        let value = try JSONParser().parse(Data(literal.utf8))
        for decoder in [ValueDecoder(), ValueDecoder(options: CodingOptions(coercion: .lenient))] {
            if let expected {
                #expect(try decoder.decode(Int64.self, from: value) == expected, "\(literal)")
            } else {
                let error = #expect(throws: DecodingError.self, "\(literal)") {
                    try decoder.decode(Int64.self, from: value)
                }
                if case .dataCorrupted(let context)? = error {
                    #expect(context.debugDescription.contains("integer") || context.debugDescription.contains("fit"))
                }
            }
        }
    }

    @Test("dates outside the years 0000–9999 fail at decode time and cannot be encoded")
    func dateRange() throws {
        struct Stamp: Codable { var at: Date }
        for bad: JSONValue in [1e19, -1e19, 253_402_300_800, -62_167_219_201, "0000-01-01T00:00:00+01:00"] {
            let error = #expect(throws: DecodingError.self, "\(bad)") {
                try ValueDecoder().decode(Stamp.self, from: ["at": bad])
            }
            if case .dataCorrupted(let context)? = error {
                #expect(context.codingPath.map(\.stringValue) == ["at"])
            }
        }
        let last = try ValueDecoder().decode(Stamp.self, from: ["at": "9999-12-31T23:59:59.999Z"])
        #expect(DateFormat.iso8601WithFractionalSeconds.string(from: last.at) == "9999-12-31T23:59:59.999Z")
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(Stamp(at: Date(timeIntervalSince1970: 1e19))) }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(Stamp(at: Date(timeIntervalSince1970: .nan))) }
        // Formatting directly is total: it clamps instead of trapping.
        #expect(DateFormat.rails.string(from: Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.999+0000")
        #expect(DateFormat.iso8601.string(from: Date(timeIntervalSince1970: -.infinity)) == "0000-01-01T00:00:00Z")
        #expect(DateFormat.iso8601.string(from: Date(timeIntervalSince1970: .nan)) == "0000-01-01T00:00:00Z")
        #expect(
            DateFormat.iso8601WithFractionalSeconds.string(from: Date(timeIntervalSince1970: 253_402_300_799.9996))
                == "9999-12-31T23:59:59.999Z")
    }

    @Test("custom patterns refuse non-ASCII text instead of handing it to DateFormatter, which traps on it")
    func customPatternNonASCII() {
        // Found by the dates fuzz target: DateFormatter on Linux stops the process with "Incorrect range".
        let hostile = String(
            decoding: [0x36, 0x30, 0x32, 0xCC, 0xAA, 0xB8, 0xD2, 0x0A, 0x35, 0x2D, 0x30, 0x36], as: UTF8.self)
        #expect(DateFormat.custom("yyyy-MM-dd").date(from: hostile) == nil)
        #expect(DateFormat.custom("yyyy-MM-dd").date(from: "2024-05-06") != nil)
        #expect(RetryPolicy.retryAfterDelay("Wed, 21 Oct 2015 07:28:00 GMT" + hostile, now: Date()) == nil)
    }

    @Test("a Decimal takes a whole number string (Pydantic's and DRF's), not its prefix; spaces only when lenient")
    func decimalStrings() throws {
        let lenient = ValueDecoder(options: CodingOptions(coercion: .lenient))
        let strict = ValueDecoder()
        #expect(try lenient.decode(Decimal.self, from: " 12.50 ") == Decimal(string: "12.5"))
        #expect(try lenient.decode(Decimal.self, from: "-1e3") == -1000)
        #expect(try strict.decode(Decimal.self, from: "12.50") == Decimal(string: "12.5"))
        #expect(throws: DecodingError.self) { try strict.decode(Decimal.self, from: " 12.50 ") }
        for bad: JSONValue in ["12abc", "-", "1,5", "0x10", "1e", "1e5x", "", "NaN", "1e200"] {
            #expect(throws: DecodingError.self, "\(bad)") { try lenient.decode(Decimal.self, from: bad) }
            #expect(throws: DecodingError.self, "\(bad)") { try strict.decode(Decimal.self, from: bad) }
        }
    }

    @Test("a Decimal is sent as its own digits: a number when a Double writes them back, else a string")
    func decimalEncoding() throws {
        let encoder = ValueEncoder()
        func sent(_ text: String) throws -> JSONValue {
            try encoder.encode(try #require(Decimal(string: text)))
        }
        #expect(try sent("17.99") == .double(17.99))
        #expect(JSONWriter.serialize(try sent("17.99")) == Data("17.99".utf8))
        #expect(try sent("12") == .int(12))
        #expect(try sent("-0.5") == .double(-0.5))
        #expect(try sent("0.12345678901234567890123") == "0.12345678901234567890123")
        #expect(try sent("123456789012345678901234567890") == "123456789012345678901234567890")
    }

    @Test("numbers compare and hash by value")
    func numericEquality() {
        #expect(JSONValue.int(25) == .double(25))
        #expect(JSONValue.uint(5) == .int(5))
        #expect(JSONValue.double(0.5) != .int(0))
        #expect(Set<JSONValue>([.int(25), .double(25), .uint(25)]).count == 1)
        #expect(Set<JSONValue>([.uint(.max), .double(0x1p64)]).count == 2)
    }

    @Test("lenient Booleans and strings")
    func lenientOthers() throws {
        let lenient = ValueDecoder(options: CodingOptions(coercion: .lenient))
        #expect(try lenient.decode(Bool.self, from: "true") == true)
        #expect(try lenient.decode(Bool.self, from: 0) == false)
        #expect(try lenient.decode(String.self, from: 42) == "42")
        #expect(try lenient.decode(Double.self, from: "46.8") == 46.8)
        #expect(throws: DecodingError.self) { try lenient.decode(Bool.self, from: "maybe") }
        #expect(throws: DecodingError.self) { try lenient.decode(Int.self, from: 2.5) }
    }

    @Test("optional scalars: present, null, missing and wrong")
    func optionals() throws {
        struct Optionals: Decodable, Equatable {
            var name: String?
            var count: Int?
            var speed: Double?
            var active: Bool?
        }
        let decoder = ValueDecoder()
        #expect(
            try decoder.decode(Optionals.self, from: ["name": "a", "count": 2, "speed": 1, "active": true])
                == Optionals(name: "a", count: 2, speed: 1, active: true))
        #expect(
            try decoder.decode(Optionals.self, from: ["name": nil, "count": nil])
                == Optionals(name: nil, count: nil, speed: nil, active: nil))
        #expect(throws: DecodingError.self) { try decoder.decode(Optionals.self, from: ["count": "2"]) }
        #expect(throws: DecodingError.self) { try decoder.decode(Optionals.self, from: ["active": 1]) }
        let lenient = ValueDecoder(options: CodingOptions(coercion: .lenient))
        #expect(try lenient.decode(Optionals.self, from: ["count": "2", "active": 1, "name": 5]).count == 2)
    }

    @Test("numbers out of range are errors, not truncations")
    func ranges() {
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Int8.self, from: 128) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(UInt.self, from: -1) }
        #expect(throws: DecodingError.self) { try ValueDecoder().decode(Float.self, from: .double(1e300)) }
    }

    @Test("non-finite numbers cannot be encoded")
    func nonFinite() {
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(["x": Double.nan]) }
        #expect(throws: EncodingError.self) { try ValueEncoder().encode(Float.infinity) }
    }
}
