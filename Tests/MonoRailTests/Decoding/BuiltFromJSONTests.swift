import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// `Model(json:)` with an id is the same record as the store's live instance of it.
@Suite("Instances built from JSON", .timeLimit(.minutes(5)))
struct BuiltFromJSONTests {
    static let record: JSONValue = [
        "id": 1, "company": "From JSON", "number_of_cars": 9, "max_speed": 99.5, "in_service": true, "tags": ["x"],
    ]

    @Test(
        "saved while the store holds a live copy: the answer merges into that one instance, and the built one takes it")
    func saveMergesIntoLiveCopy() async throws {
        try await withHarness { harness in
            let store = harness.store
            let live = try await Train.get(id: 1, in: store)
            live.tags = ["edited here, unsaved"]
            let built = try Train(json: Self.record, using: store)
            built.maxSpeed = 120
            try await built.save()
            let server = try #require(try harness.server.store.find("trains", id: "1"))
            #expect(server["company"] == "From JSON" && server["max_speed"] == 120)
            // One instance of the record: the live copy, with the server's answer and its own edit.
            #expect(store.instance(of: Train.self, id: 1) === live)
            #expect(live.company == "From JSON" && live.maxSpeed == 120 && live.numberOfCars == 9)
            #expect(live.tags == ["edited here, unsaved"] && live.hasChanges)
            #expect(built.company == "From JSON" && built.maxSpeed == 120 && !built.hasChanges)
            #expect(built.id == 1)
        }
    }

    @Test("fetched while the store holds a live copy: both show the server's record")
    func fetchReadsIntoBoth() async throws {
        try await withHarness { harness in
            let store = harness.store
            let live = try await Train.get(id: 2, in: store)
            let built = try Train(json: ["id": 2, "company": "Stale"], using: store)
            let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
            _ = try harness.server.store.update(trains, id: "2", attributes: ["company": "Renamed"])
            try await built.fetch()
            #expect(built.company == "Renamed" && live.company == "Renamed")
            #expect(store.instance(of: Train.self, id: 2) === live)
        }
    }
}
