import Foundation
import Logging
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// `@Has` never fails silently, and an assignment never leaves the server and the identity map
/// disagreeing with nothing pending: `train.cars = [a, b]` waits for the train's save, which saves
/// every car it re-pointed — those the server holds and the store did not included.
enum Unkeyed {
    /// Wagons have no field naming a depot.
    @Resource(name: "depot")
    final class Depot {
        var name: String?
        @Has var wagons: [Wagon]
        @Has(.one) var keeper: Wagon?
    }

    @Resource(name: "wagon")
    final class Wagon {
        var label: String?
    }
}

@Suite("@Has assignments and keys", .timeLimit(.minutes(5)))
struct HasAssignmentTests {
    static func storedTrainID(ofCar id: Int, _ harness: TestAPI) throws -> JSONValue? {
        try harness.server.store.find("cars", id: String(id))?["train_id"]
    }

    @Test("train.cars = [a, b] is saved with the train: the server agrees, cars the store did not hold included")
    func savedWithOwner() async throws {
        try await withHarness { harness in
            let store = harness.store
            let first = try await Seed.Train.get(id: 1, in: store)
            let second = try await Seed.Train.get(id: 2, in: store)
            let one = try await Seed.Car.get(id: 1, in: store)
            let three = try await Seed.Car.get(id: 3, in: store)
            #expect(store.instance(of: Seed.Car.self, id: 2) == nil)  // car 2 of train 1 is not live

            first.cars = [one, three]
            // The app's view at once; the train holds the change until it is saved.
            #expect(first.cars.map(\.id) == [1, 3])
            #expect(three.train === first)
            #expect(second.cars.isEmpty)
            #expect(first.hasChanges)
            #expect(try Self.storedTrainID(ofCar: 3, harness) == 2)

            let before = harness.journal.count
            try await first.save()
            let sent = Array(harness.journal.entries.dropFirst(before))
            #expect(sent.contains("GET /cars?train_id=1"))
            #expect(sent.contains("PUT /cars/2") && sent.contains("PUT /cars/3"))
            #expect(!sent.contains("PUT /cars/1"))  // already the train's

            // The server's state.
            #expect(try Self.storedTrainID(ofCar: 1, harness) == 1)
            #expect(try Self.storedTrainID(ofCar: 2, harness) == .null)
            #expect(try Self.storedTrainID(ofCar: 3, harness) == 1)
            // The app's view, with nothing left pending.
            // Car 2 was read, re-pointed, saved and let go: the store holds instances weakly.
            let two = try await Seed.Car.get(id: 2, in: store)
            #expect(two.train == nil)
            #expect(first.cars.map(\.id) == [1, 3])
            #expect(second.cars.isEmpty)
            #expect(![first, second].contains { $0.hasChanges })
            #expect(![one, two, three].contains { $0.hasChanges })
            // Saving again sends nothing for the cars.
            let again = harness.journal.count
            first.cars = [one, three]
            try await first.save()
            #expect(!harness.journal.entries.dropFirst(again).contains { $0.hasPrefix("PUT /cars") })
        }
    }

    @Test("two assignments before the save: the cars the first left out still leave, unless listed again")
    func reassigned() async throws {
        try await withHarness { harness in
            let store = harness.store
            let first = try await Seed.Train.get(id: 1, in: store)
            try await first.$cars.load()
            let (one, two) = (first.cars[0], first.cars[1])
            let three = try await Seed.Car.get(id: 3, in: store)
            first.cars = [one]
            first.cars = [one, three]
            try await first.save()
            #expect(try Self.storedTrainID(ofCar: 1, harness) == 1)
            #expect(try Self.storedTrainID(ofCar: 2, harness) == .null)
            #expect(try Self.storedTrainID(ofCar: 3, harness) == 1)
            #expect(!two.hasChanges && !three.hasChanges && !first.hasChanges)

            first.cars = [one]
            first.cars = [one, two]
            try await first.save()
            #expect(try Self.storedTrainID(ofCar: 2, harness) == 1)
            #expect(try Self.storedTrainID(ofCar: 3, harness) == .null)
        }
    }

    @Test("an assignment to a train not yet created is carried out and saved by its create")
    func savedWithCreate() async throws {
        try await withHarness { harness in
            let store = harness.store
            let car = try await Seed.Car.get(id: 3, in: store)
            let train = Seed.Train()
            train.company = "New Line"
            train.cars = [car]
            try await train.create(in: store)
            let id = try #require(train.id)
            #expect(try Self.storedTrainID(ofCar: 3, harness) == id.jsonValue)
            #expect(train.cars.map(\.id) == [3])
            #expect(!car.hasChanges && !train.hasChanges)
        }
    }

    @Test("a @Has whose related model has no field for the key: load throws naming both, a read logs it")
    func missingKey() async throws {
        try await withCanned { server, store in
            let log = LogCapture()
            store.configure { $0.logger = log.logger() }
            server.respond(to: "GET /depots/1", body: #"{"depot": {"id": 1, "name": "North"}}"#)
            let depot = try await Unkeyed.Depot.get(id: 1, in: store)
            let error = await #expect(throws: APIError.self) { try await depot.$wagons.load() }
            #expect(error?.code == .invalidConfiguration)
            for name in ["Depot.wagons", "Wagon", "\"depot_id\""] {
                #expect(error?.message.contains(name) == true, "\(error?.message ?? "")")
            }
            let queryError = await #expect(throws: APIError.self) { try await depot.$wagons.query() }
            #expect(queryError?.code == .invalidConfiguration)

            #expect(depot.wagons.isEmpty)
            #expect(depot.keeper == nil)
            let errors = log.all.filter { $0.level == .error }.map(\.message)
            #expect(errors.contains { $0.contains("Depot.wagons") && $0.contains("Wagon") })
            #expect(errors.contains { $0.contains("Depot.keeper") })
            // Said once, not at every read.
            _ = depot.wagons
            #expect(log.all.filter { $0.level == .error }.count == errors.count)

            // An assignment cannot be carried out: the save says why.
            server.respond(to: "PUT /depots/1", body: #"{"depot": {"id": 1, "name": "North"}}"#)
            depot.wagons = [Unkeyed.Wagon()]
            let saveError = await #expect(throws: APIError.self) { try await depot.save() }
            #expect(saveError?.code == .invalidConfiguration)
            #expect(server.requests.allSatisfy { !$0.hasPrefix("GET /wagons") })
        }
    }
}
