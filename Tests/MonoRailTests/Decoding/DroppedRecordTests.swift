import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Testing

/// Trains as the MonoRail seed's `customDeserialize` returning `nil` would leave them: Deutsche
/// Bahn's are dropped.
@Resource(name: "train")
final class ListedTrain {
    var company: String?
    @Has(.embedsMany) var cars: [ListedCar]

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue {
        record["company"] == "Deutsche Bahn AG" ? .null : record
    }
}

/// Cars that need repairs are dropped.
@Resource(name: "car")
final class ListedCar {
    var occupancy: Int?
    @References var train: ListedTrain?

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue {
        record["needs_repairs"] == true ? .null : record
    }
}

@Suite("customDeserialize may drop a record", .timeLimit(.minutes(5)))
struct DroppedRecordTests {
    @Test("a list leaves dropped records out, in JSON and in MessagePack", arguments: [WireFormat.json, .messagePack])
    func list(format: WireFormat) async throws {
        func inFormat(_ configuration: inout MonoRail.Configuration) { configuration.format = format }
        try await withHarness(configure: inFormat) { harness in
            let trains = try await ListedTrain.get(in: harness.store)
            #expect(trains.map(\.company) == ["MonoRail Co."])
            #expect(harness.store.instance(of: ListedTrain.self, id: 2) == nil)
        }
    }

    @Test("embedded records dropped by their model's hook are left out of the relationship")
    func embedded() async throws {
        try await withHarness { harness in
            let train = try await ListedTrain.get(id: 1, in: harness.store)
            #expect(train.cars.map(\.occupancy) == [40])
            #expect(harness.store.instance(of: ListedCar.self, id: 2) == nil)
        }
    }

    @Test("where one record must come back, a dropped one is a decoding failure")
    func single() async throws {
        try await withHarness { harness in
            let error = try await #require(throws: APIError.self) {
                try await ListedTrain.get(id: 2, in: harness.store)
            }
            #expect(error.code == .decodingFailed)
            #expect(error.decodingFailure?.reason == "customDeserialize dropped the record")
            #expect(error.decodingFailure?.path == "$.train")
            #expect(harness.store.count == 0)
        }
    }

    @Test("a null the server sent where a record belongs is still an error, not a drop")
    func serverNull() throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let error = #expect(throws: APIError.self) {
            try ListedTrain.merge(listBody: Data(#"{"trains": [{"id": 1, "company": "A"}, null]}"#.utf8), in: store)
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.path == "$.trains[1]")
        #expect(store.count == 0)
    }
}
