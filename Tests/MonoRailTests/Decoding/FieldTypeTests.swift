import Foundation
import MonoRail
import MonoRailTesting
import TestServer
import Testing

@Suite("Field types", .timeLimit(.minutes(5)))
struct FieldTypeTests {
    static let specimen = """
        {"specimen": {"id": "s-1", "text": "hello", "int8": -128, "int16": 32767, "int32": -2147483648,
         "int64": 9223372036854775807, "uint": 42, "uint8": 255, "uint16": 65535, "uint32": 4294967295,
         "uint64": 18446744073709551615, "double": 46.8, "float": 1.5, "decimal": 12.34, "flag": true,
         "date": "2024-05-06T07:08:09.123Z", "link": "https://example.com/a?b=c", "uuid": "6F1E6D6A-7B3C-4E4B-9C1F-2A4B5C6D7E8F",
         "numbers": [1, 2, 3], "ratios": {"a": 0.5, "b": 2}, "extra": {"nested": [1, "two", null]},
         "livery": "blue", "other_livery": null, "depot": {"city": "Basel", "platforms": 12},
         "depots": [{"city": "Bern", "platforms": 4}], "nickname": null, "count": 9, "unknown_field": [1, 2]}}
        """

    /// Fields named as the code `@Resource` writes names its own parameters and locals.
    @Resource
    final class Reading {
        var value: Double?
        var index: Int?
        var result: String?
        var other: Bool?
        var decoder: String?
    }

    @Test("fields named value, index, result, other or decoder decode, compare and save like any other")
    func namesTheMacroUses() async throws {
        try await withCanned { server, store in
            let body =
                #"{"reading": {"id": 1, "value": 2.5, "index": 3, "result": "ok", "other": true, "decoder": "d"}}"#
            server.respond(to: "GET /readings/1", body: body)
            let reading = try await Reading.get(id: 1, in: store)
            #expect(reading.value == 2.5 && reading.index == 3 && reading.result == "ok")
            #expect(reading.other == true && reading.decoder == "d")
            #expect(!reading.hasChanges)
            reading.result = "changed"
            #expect(reading.changes.map(\.key) == ["result"])
        }
    }

    @Test("every supported type decodes, and the record keeps its string id")
    func decodesEveryType() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /specimens/s-1", body: Self.specimen)
            let specimen = try await Specimen.get(id: "s-1", in: store)
            #expect(specimen.id == "s-1")
            #expect(specimen.text == "hello")
            #expect(specimen.int8 == -128 && specimen.int16 == 32767 && specimen.int32 == .min)
            #expect(specimen.int64 == .max)
            #expect(specimen.uint == 42 && specimen.uint8 == 255 && specimen.uint16 == 65535)
            #expect(specimen.uint32 == .max && specimen.uint64 == .max)
            #expect(specimen.double == 46.8 && specimen.float == 1.5)
            #expect(specimen.decimal == Decimal(string: "12.34"))
            #expect(specimen.flag)
            #expect(specimen.date == Date(timeIntervalSince1970: 1_714_979_289.123))
            #expect(specimen.link == URL(string: "https://example.com/a?b=c"))
            #expect(specimen.uuid == UUID(uuidString: "6F1E6D6A-7B3C-4E4B-9C1F-2A4B5C6D7E8F"))
            #expect(specimen.numbers == [1, 2, 3])
            #expect(specimen.ratios == ["a": 0.5, "b": 2])
            #expect(specimen.extra == ["nested": [1, "two", nil]])
            #expect(specimen.livery == .blue && specimen.otherLivery == nil)
            #expect(specimen.depot == Depot(city: "Basel", platforms: 12))
            #expect(specimen.depots == [Depot(city: "Bern", platforms: 4)])
            #expect(specimen.nickname == nil)
            #expect(specimen.count == 9)
        }
    }

    @Test("save sends every field back in its wire form, with the id in the path as received")
    func roundTrips() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /specimens/s-1", body: Self.specimen)
            server.respond(to: "PUT /specimens/s-1", body: Self.specimen)
            let specimen = try await Specimen.get(id: "s-1", in: store)
            // One edit, so the save is sent: an unchanged record is not.
            specimen.count = 10
            try await specimen.save()
            let sent = try recordedBody(try #require(server.requests.last))
            let received = try JSONParser().parse(Data(Self.specimen.utf8))["specimen"]
            for key in [
                "text", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "double",
                "float", "flag", "link", "numbers", "extra", "livery", "other_livery", "depot", "depots",
                "nickname",
            ] {
                #expect(sent["specimen"]?[key] == received?[key], "\(key)")
            }
            #expect(sent["specimen"]?["count"] == 10)
            #expect(sent["specimen"]?["decimal"]?.doubleValue == 12.34)
            #expect(sent["specimen"]?["ratios"]?["b"]?.doubleValue == 2)
            #expect(sent["specimen"]?["date"] == "2024-05-06T07:08:09.123Z")
            #expect(sent["specimen"]?["uuid"]?.stringValue?.uppercased() == "6F1E6D6A-7B3C-4E4B-9C1F-2A4B5C6D7E8F")
            #expect(sent["specimen"]?["id"] == nil)
            #expect(sent["specimen"]?["unknown_field"] == nil)
        }
    }

    @Test("renamed keys, transforms, custom paths and ignored properties")
    func keysAndTransforms() async throws {
        try await withCanned { server, store in
            let body = #"""
                {"gauge": {"id": 3, "label": "Boiler", "fill": 50, "checked_at": "2024/05/06 07:08:09 +0000", "img": "/g/3.png", "local_note": "server"}}
                """#
            server.respond(to: "GET /meta/gauges/3", body: body)
            server.respond(to: "PUT /meta/gauges/3", body: body)
            let gauge = try await Gauge.get(id: 3, in: store)
            #expect(gauge.name == "Boiler")
            #expect(gauge.fill == 0.5)
            #expect(gauge.checkedAt == Date(timeIntervalSince1970: 1_714_979_289))
            #expect(gauge.image == URL(string: "https://cdn.example.com/g/3.png"))
            #expect(gauge.localNote == "mine")
            gauge.localNote = "still mine"
            #expect(!gauge.hasChanges)
            gauge.fill = 0.25
            try await gauge.save()
            let sent = try recordedBody(try #require(server.requests.last))["gauge"]
            #expect(sent?["label"] == "Boiler")
            #expect(sent?["fill"] == 25.0)
            #expect(sent?["checked_at"] == "2024/05/06 07:08:09 +0000")
            #expect(sent?["img"] == "https://cdn.example.com/g/3.png")
            #expect(sent?["local_note"] == nil)
        }
    }
}

@Suite("Initializers")
struct InitializerTests {
    @Test("a model's own initializer sets fields; init() keeps the declared defaults")
    func ownInitializer() {
        let ticket = Ticket(holder: "Ada", seats: 2)
        #expect(ticket.holder == "Ada")
        #expect(ticket.seats == 2)
        #expect(ticket.note == nil)
        let empty = Ticket()
        #expect(empty.holder == "nobody")
        #expect(empty.seats == 1)
        #expect(!empty.hasChanges)
        let specimen = Specimen()
        #expect(specimen.count == 7 && specimen.livery == .red && specimen.text.isEmpty)
    }
}
