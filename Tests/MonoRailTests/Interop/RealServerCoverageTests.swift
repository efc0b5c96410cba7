import Foundation
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@testable import MonoRail

/// Renamed keys and transforms, as ``Gauge`` has them, at a path the reference server serves.
@Resource(name: "gauge")
final class ServedGauge {
    @Field(key: "label") var name: String?
    @Field(transform: .percentage) var fill: Double?
    @Field(transform: .date(format: "y/MM/dd HH:mm:ss Z")) var checkedAt: Date?
    @Field(key: "img", transform: .url(relativeTo: URL(string: "https://cdn.example.com/"))) var image: URL?
    @Ignored var localNote: String = "mine"
}

/// The trains, with every response of this model inside `{"data": …}`.
@Resource(name: "train")
final class NamespacedTrain {
    var company: String?
    var numberOfCars: Int?

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.rootNamespace = "data"
    }
}

/// What the canned field-type and convention tests read, sent to and read back from the reference
/// server.
@Suite("Against the reference server: every field type, renamed keys, side-loads, a model's namespace")
struct RealServerCoverageTests {
    static let specimens = ServerSchema(
        resources: [
            ResourceSchema(
                name: "specimen",
                fields: [
                    FieldSchema(name: "text", type: .string), FieldSchema(name: "int8", type: .integer),
                    FieldSchema(name: "int16", type: .integer), FieldSchema(name: "int32", type: .integer),
                    FieldSchema(name: "int64", type: .integer), FieldSchema(name: "uint", type: .integer),
                    FieldSchema(name: "uint8", type: .integer), FieldSchema(name: "uint16", type: .integer),
                    FieldSchema(name: "uint32", type: .integer), FieldSchema(name: "uint64", type: .json),
                    FieldSchema(name: "double", type: .float), FieldSchema(name: "float", type: .float),
                    FieldSchema(name: "decimal", type: .float), FieldSchema(name: "flag", type: .boolean),
                    FieldSchema(name: "date", type: .datetime), FieldSchema(name: "link", type: .string),
                    FieldSchema(name: "uuid", type: .string), FieldSchema(name: "numbers", type: .json),
                    FieldSchema(name: "ratios", type: .json), FieldSchema(name: "extra", type: .json),
                    FieldSchema(name: "livery", type: .string), FieldSchema(name: "other_livery", type: .string),
                    FieldSchema(name: "depot", type: .json), FieldSchema(name: "depots", type: .json),
                    FieldSchema(name: "nickname", type: .string), FieldSchema(name: "count", type: .integer),
                ]),
            ResourceSchema(
                name: "gauge",
                fields: [
                    FieldSchema(name: "label", type: .string), FieldSchema(name: "fill", type: .float),
                    FieldSchema(name: "checked_at", type: .string), FieldSchema(name: "img", type: .string),
                ]),
        ],
        idType: .string)

    @Test(
        "every field type goes to the server and comes back equal, in JSON and in MessagePack",
        arguments: [WireFormat.json, .messagePack])
    func everyFieldType(format: WireFormat) async throws {
        let useFormat: (inout MonoRail.Configuration) -> Void = { $0.format = format }
        try await withHarness(schema: Self.specimens, configure: useFormat) { harness in
            let sent = Specimen()
            sent.text = "héllo \u{1F682}"
            (sent.int8, sent.int16, sent.int32, sent.int64) = (.min, .max, .min, .max)
            (sent.uint, sent.uint8, sent.uint16, sent.uint32, sent.uint64) = (42, .max, .max, .max, .max)
            (sent.double, sent.float, sent.decimal) = (46.8, 1.5, Decimal(string: "12.34") ?? 0)
            sent.flag = true
            sent.date = Date(timeIntervalSince1970: 1_714_979_289.123)
            sent.link = URL(string: "https://example.com/a?b=c")
            sent.uuid = UUID(uuidString: "6F1E6D6A-7B3C-4E4B-9C1F-2A4B5C6D7E8F")
            sent.numbers = [1, 2, 3]
            sent.ratios = ["a": 0.5, "b": 2]
            sent.extra = ["nested": [1, "two", nil]]
            sent.livery = .blue
            sent.depot = Depot(city: "Basel", platforms: 12)
            sent.depots = [Depot(city: "Bern", platforms: 4)]
            sent.count = 9
            try await sent.create(in: harness.store)
            let id = try #require(sent.id)
            #expect(id.description.count == 10)  // the server's string id

            let other = ResourceStore(configuration: harness.store.configuration)
            let read = try await Specimen.get(id: id, in: other)
            #expect(read !== sent)
            #expect(read.text == sent.text)
            #expect(read.int8 == .min && read.int16 == .max && read.int32 == .min && read.int64 == .max)
            #expect(read.uint == 42 && read.uint8 == .max && read.uint16 == .max && read.uint32 == .max)
            #expect(read.uint64 == .max)
            #expect(read.double == 46.8 && read.float == 1.5 && read.decimal == Decimal(string: "12.34"))
            #expect(read.flag)
            #expect(read.date == sent.date)
            #expect(read.link == sent.link && read.uuid == sent.uuid)
            #expect(read.numbers == [1, 2, 3] && read.ratios == ["a": 0.5, "b": 2])
            #expect(read.extra == ["nested": [1, "two", nil]])
            #expect(read.livery == .blue && read.otherLivery == nil)
            #expect(read.depot == sent.depot && read.depots == sent.depots)
            #expect(read.nickname == nil && read.count == 9)
            #expect(!read.hasChanges)

            read.otherLivery = .red
            read.nickname = "Spec"
            try await read.save()
            try await sent.fetch()
            #expect(sent.otherLivery == .red && sent.nickname == "Spec")
        }
    }

    @Test("renamed keys and transforms are what the server stores, and what it answers is read back")
    func renamedKeys() async throws {
        try await withHarness(schema: Self.specimens) { harness in
            let gauge = ServedGauge()
            gauge.name = "Boiler"
            gauge.fill = 0.5
            gauge.checkedAt = Date(timeIntervalSince1970: 1_714_979_289)
            gauge.image = URL(string: "https://cdn.example.com/g/3.png")
            gauge.localNote = "never sent"
            try await gauge.create(in: harness.store)
            let id = try #require(gauge.id)
            let stored = try #require(try harness.server.store.find("gauges", id: id.description))
            #expect(stored["label"] == "Boiler")
            #expect(stored["fill"] == 50.0)
            #expect(stored["checked_at"] == "2024/05/06 07:08:09 +0000")
            #expect(stored["img"] == "https://cdn.example.com/g/3.png")
            #expect(stored["local_note"] == nil)

            _ = try harness.server.store.update(
                Self.specimens.resources[1], id: id.description, attributes: ["fill": 25, "img": "/g/4.png"])
            try await gauge.fetch()
            #expect(gauge.fill == 0.25)
            #expect(gauge.image == URL(string: "https://cdn.example.com/g/4.png"))
            #expect(gauge.localNote == "never sent")
        }
    }

    @Test("include: side-loads related records, which the relationships then read with no request")
    func includeSideLoads() async throws {
        try await withHarness { harness in
            let train = try await Seed.Train.get(id: 1, include: ["cars", "conductor"], in: harness.store)
            #expect(harness.journal.entries.last == "GET /trains/1?include=cars%2Cconductor")
            let requests = harness.journal.count
            #expect(train.cars.map(\.occupancy) == [40, 12])
            #expect(train.conductor?.name == "Bill")
            #expect(harness.journal.count == requests)
        }
    }

    @Test("a model's own namespace reads every answer inside {\"data\": …}, errors included")
    func modelNamespace() async throws {
        try await withHarness(server: .init(envelope: .namespace("data"))) { harness in
            let train = try await NamespacedTrain.get(id: 1, in: harness.store)
            #expect(train.company == "MonoRail Co.")
            #expect(try await NamespacedTrain.get(in: harness.store).count == 2)
            let draft = NamespacedTrain()
            let error = await #expect(throws: APIError.self) { try await draft.create(in: harness.store) }
            #expect(error?.errors["company"] == ["can't be blank"])
            // A model without the namespace reads the same answer as a failure, not as empty.
            await #expect(throws: APIError.self) { try await Train.get(id: 1, in: harness.store) }
        }
    }
}
