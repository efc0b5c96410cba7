import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import TestServer
import Testing

@Suite("Relationships", .timeLimit(.minutes(5)))
struct RelationshipTests {
    @Test("embedded records merge into the identity map, and references resolve from it")
    func embedded() async throws {
        try await withHarness { harness in
            let train = try await Spec.Train.get(id: 1, in: harness.store)
            #expect(train.cars.map(\.occupancy) == [40, 12])
            #expect(train.conductor?.name == "Bill")
            let car = try #require(harness.store.instance(of: Spec.Car.self, id: 1))
            #expect(car === train.cars.first)
            #expect(car.train === train)
            #expect(train.conductor?.train === train)
            #expect(try await Spec.Car.get(id: 1, in: harness.store) === car)
            // Embedded records are not sent back.
            train.maxSpeed = 50
            try await train.save()
            #expect(train.cars.count == 2)
        }
    }

    @Test("a reference loads once; a live record answers with no request")
    func referenceLoad() async throws {
        try await withHarness { harness in
            let car = try await Seed.Car.get(id: 3, in: harness.store)
            #expect(car.train == nil)
            let before = harness.journal.count
            let train = try await car.$train.load()
            #expect(train?.company == "Deutsche Bahn AG")
            #expect(car.train === train)
            #expect(harness.journal.entries.last == "GET /trains/2")
            let count = harness.journal.count
            #expect(count == before + 1)
            _ = try await car.$train.load()
            let other = try await Seed.Car.get(id: 3, in: harness.store)
            _ = try await other.$train.load()
            #expect(harness.journal.count == count + 1)  // only the car's own GET
        }
    }

    @Test("a reference's raw id reads with no request and no live target; observed as the reference is")
    func referenceIDs() async throws {
        try await withHarness { harness in
            let cars = try await Seed.Car.get(in: harness.store)
            let before = harness.journal.count
            let grouped = Dictionary(grouping: cars) { $0.$train.id }
            #expect(grouped.mapValues { $0.compactMap(\.id).count } == [ResourceID(1): 2, ResourceID(2): 1])
            #expect(cars.allSatisfy { $0.train == nil })
            #expect(harness.store.instance(of: Seed.Train.self, id: 1) == nil)
            #expect(harness.journal.count == before)

            let car = try #require(cars.first)
            let changed = Locked(false)
            withObservationTracking {
                _ = car.$train.id
            } onChange: {
                changed.withLock { $0 = true }
            }
            let other = try await Seed.Train.get(id: 2, in: harness.store)
            car.train = other
            #expect(changed.withLock { $0 })
            #expect(car.$train.id == 2)
            car.train = nil
            #expect(car.$train.id == nil)

            let yard = Yard()
            let trains = try await Seed.Train.get(in: harness.store)
            yard.trains = trains
            #expect(yard.$trains.ids == trains.compactMap(\.id))
            // A @Has(.many): the ids of the live cars naming the train; car 1 was moved away above.
            let train = try #require(trains.first)
            #expect(train.$cars.ids == [2])
            #expect(train.$cars.ids == train.cars.compactMap(\.id))
        }
    }

    @Test("@Has(.many) loads with the index filtered by the foreign key; concurrent loads share a request")
    func hasManyLoad() async throws {
        // Each answer takes a second, so the two loads overlap however busy the machine is.
        try await withHarness(server: .init(faults: FaultInjection(latency: .seconds(1)))) { harness in
            let train = try await Seed.Train.get(id: 1, in: harness.store)
            #expect(train.cars.isEmpty)
            async let first = train.$cars.load()
            async let second = train.$cars.load()
            let (a, b) = try await (first, second)
            #expect(a.map(\.occupancy) == [40, 12])
            #expect(b.map(\.occupancy) == [40, 12])
            #expect(train.cars.map(\.occupancy) == [40, 12])
            #expect(harness.journal.entries.filter { $0 == "GET /cars?train_id=1" }.count == 1)
        }
    }

    @Test("moving a conductor updates both trains with no extra request (the seed's story)")
    func consistency() async throws {
        try await withHarness { harness in
            let trainA = try await Seed.Train.get(id: 1, in: harness.store)
            let trainB = try await Seed.Train.get(id: 2, in: harness.store)
            let conductor = try #require(try await trainA.$conductor.load())
            _ = try await trainB.$conductor.load()
            #expect(conductor.name == "Bill")
            let ada = trainB.conductor

            conductor.train = trainB
            #expect(conductor.hasChanges)
            #expect(conductor.changes["train"] == FieldChange(field: "train", old: 1, new: 2))
            let before = harness.journal.count
            try await conductor.save()
            #expect(harness.journal.count == before + 1)
            #expect(harness.journal.entries.last == "PUT /conductors/1")
            #expect(trainA.conductor == nil)
            // Two conductors point at train B now: its conductor is the one that arrived last, as
            // the seed prints it.
            #expect(trainB.conductor === conductor)
            #expect(trainB.conductor?.name == "Bill")
            #expect(try harness.server.store.find("conductors", id: "1")?["train_id"] == 2)

            // Whatever the ids: Ada (id 2) joining Bill (id 1) on train A is train A's conductor.
            let adaNow = try #require(ada)
            conductor.train = trainA
            try await conductor.save()
            #expect(trainA.conductor === conductor)
            #expect(trainB.conductor === adaNow)
            adaNow.train = trainA
            try await adaNow.save()
            #expect(trainA.conductor === adaNow)
            #expect(trainB.conductor == nil)
        }
    }

    @Test("the seed's story with embedded relationships: the conductor moves, both trains follow")
    func seedStoryEmbedded() async throws {
        try await withHarness { harness in
            let trainA = try await Spec.Train.get(id: 1, in: harness.store)
            let trainB = try await Spec.Train.get(id: 2, in: harness.store)
            let conductor = try #require(trainA.conductor)
            #expect(conductor.name == "Bill")
            #expect(trainB.conductor?.name == "Ada")
            conductor.train = trainB
            let before = harness.journal.count
            try await conductor.save()
            #expect(harness.journal.count == before + 1)
            #expect(trainA.conductor == nil)
            #expect(trainB.conductor === conductor)
            #expect(trainB.conductor?.name == "Bill")

            // A car moved between trains leaves one list and joins the other, with no request.
            let car = try #require(trainA.cars.first)
            car.train = trainB
            #expect(trainA.cars.count == 1)
            #expect(trainB.cars.contains { $0 === car })
            car.revert()
            #expect(trainA.cars.count == 2)
        }
    }

    @Test("a car created with train = t appears in t.cars; a deleted car leaves it")
    func createdAndDeleted() async throws {
        try await withHarness { harness in
            let train = try await Seed.Train.get(id: 2, in: harness.store)
            try await train.$cars.load()
            #expect(train.cars.count == 1)
            let car = Seed.Car()
            car.occupancy = 7
            car.train = train
            try await car.create(in: harness.store)
            #expect(train.cars.map(\.occupancy) == [80, 7])
            let before = harness.journal.count
            try await car.delete()
            #expect(train.cars.map(\.occupancy) == [80])
            #expect(harness.journal.count == before + 1)
        }
    }

    @Test("@Has reads follow every change to 2,000 cars: merged, moved by a merge, moved by an edit, reverted")
    func hasManyIndex() throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let trainList = (1...100).map { #"{"id": \#($0)}"# }.joined(separator: ",")
        let trains = try Seed.Train.merge(listBody: Data("[\(trainList)]".utf8), in: store)
        // Read once before the cars arrive, so the index exists when they are merged.
        #expect(trains[0].cars.isEmpty)
        let carList = (1...2_000).map { #"{"id": \#($0), "train_id": \#(($0 - 1) % 100 + 1)}"# }
        let cars = try Seed.Car.merge(listBody: Data("[\(carList.joined(separator: ","))]".utf8), in: store)
        #expect(trains.allSatisfy { $0.cars.count == 20 })
        #expect(trains[0].cars.map(\.id) == stride(from: 1, through: 2_000, by: 100).map { .int(Int64($0)) })
        // A merge moves car 1 to train 2.
        _ = try Seed.Car.merge(recordBody: Data(#"{"car": {"id": 1, "train_id": 2}}"#.utf8), in: store)
        #expect(trains[0].cars.count == 19 && trains[1].cars.count == 21)
        #expect(trains[1].cars.contains { $0 === cars[0] })
        // An edit moves car 2 to train 1; reverting it moves it back.
        cars[1].train = trains[0]
        #expect(trains[0].cars.contains { $0 === cars[1] } && trains[1].cars.count == 20)
        cars[1].revert()
        #expect(!trains[0].cars.contains { $0 === cars[1] } && trains[1].cars.count == 21)
        // A car that no longer points anywhere leaves every list.
        cars[2].train = nil
        #expect(!trains[2].cars.contains { $0 === cars[2] } && trains[2].cars.count == 19)
    }

    @Test("a reference change counts as a change and reverts")
    func referenceChanges() async throws {
        try await withHarness { harness in
            let car = try await Seed.Car.get(id: 1, in: harness.store)
            let trainA = try #require(try await car.$train.load())
            let trainB = try await Seed.Train.get(id: 2, in: harness.store)
            car.train = trainB
            #expect(car.train === trainB)
            car.revert()
            #expect(car.train === trainA)
            #expect(!car.hasChanges)
        }
    }

    @Test("a reference to a missing record is a typed 404 and changes nothing")
    func danglingReference() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /cars/5", body: #"{"car": {"id": 5, "occupancy": 3, "train_id": 99}}"#)
            let car = try await Seed.Car.get(id: 5, in: store)
            let error = try await #require(throws: APIError.self) { try await car.$train.load() }
            #expect(error.statusCode == 404)
            #expect(car.train == nil)
            #expect(store.count == 1)
        }
    }

    @Test("side-loaded records of related models merge; unknown keys are ignored")
    func sideLoading() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"""
                    {"train": {"id": 1, "company": "Side"},
                     "cars": [{"id": 10, "occupancy": 1, "train_id": 1}, {"id": 11, "occupancy": 2, "train_id": 1}],
                     "conductors": [{"id": 4, "name": "Lin", "train_id": 1}],
                     "wagons": [{"id": 1}], "meta": {"total": 1}}
                    """#)
            let train = try await Seed.Train.get(id: 1, in: store)
            #expect(train.cars.map(\.occupancy) == [1, 2])
            #expect(train.conductor?.name == "Lin")
            #expect(train.cars.first?.train === train)
            #expect(server.requests.count == 1)
        }
    }

    @Test(
        "bad embedded or side-loaded records fail the whole response and change nothing",
        arguments: [
            #"{"train": {"id": 1, "company": "X", "cars": [1, 2]}}"#,
            #"{"train": {"id": 1, "company": "X", "cars": {"id": 3}}}"#,
            #"{"train": {"id": 1, "company": "X", "cars": [{"id": 3, "occupancy": "many"}]}}"#,
            #"{"train": {"id": 1, "company": "X", "conductor": [1]}}"#,
            #"{"train": {"id": 1, "company": "X", "cars": [{"id": "1"}]}}"#,
            // The same car twice: which of the two is car 3?
            #"{"train": {"id": 1, "company": "X", "cars": [{"id": 3, "occupancy": 1}, {"id": 3, "occupancy": 2}]}}"#,
        ])
    func badEmbedded(body: String) async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "Before", "cars": [{"id": 1}]}}"#)
            let train = try await Spec.Train.get(id: 1, in: store)
            let car = try #require(train.cars.first)
            server.respond(to: "GET /trains/1", body: body)
            await #expect(throws: APIError.self) { try await train.fetch() }
            #expect(train.company == "Before")
            #expect(train.cars.count == 1 && train.cars.first === car)
            #expect(store.count == 2)
        }
    }

    @Test("an embedded list naming one record twice is an inconsistent response, with its path")
    func embeddedDuplicate() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"{"train": {"id": 1, "company": "X", "cars": [{"id": 3}, {"id": 4}, {"id": 3}]}}"#)
            let error = try await #require(throws: APIError.self) { try await Spec.Train.get(id: 1, in: store) }
            #expect(error.code == .inconsistentResponse)
            #expect(error.message.contains("$.train.cars[2]"), "\(error.message)")
            #expect(store.count == 0)
        }
    }

    @Test("embedding deeper than the limit is a typed error; 10,000 levels do not overflow the stack")
    func depth() async throws {
        try await withCanned { server, store in
            func nested(_ depth: Int) -> String {
                (1...depth).map { #"{"id": \#($0), "children": ["# }.joined() + #"{"id": 0}"#
                    + String(repeating: "]}", count: depth)
            }
            server.respond(to: "GET /nodes/1", body: #"{"node": \#(nested(40))}"#)
            let error = try await #require(throws: APIError.self) { try await Node.get(id: 1, in: store) }
            #expect(error.code == .decodingFailed)
            #expect(error.message.contains("embedded more than 32 levels"))
            server.respond(to: "GET /nodes/1", body: #"{"node": \#(nested(10_000))}"#)
            let deep = try await #require(throws: APIError.self) { try await Node.get(id: 1, in: store) }
            #expect(deep.code == .decodingFailed)
            server.respond(to: "GET /nodes/1", body: #"{"node": \#(nested(5))}"#)
            let node = try await Node.get(id: 1, in: store)
            #expect(node.children.first?.children.first?.id == 3)
            #expect(store.count == 6)
        }
    }

    @Test("a cycle of embedded records decodes into one train, and saves without recursion")
    func cycle() async throws {
        try await withCanned { server, store in
            let body = #"""
                {"cycle_train": {"id": 1, "company": "Loop",
                 "cars": [{"id": 7, "occupancy": 3, "train": {"id": 1, "company": "Loop", "cars": [{"id": 7}]}}]}}
                """#
            server.respond(to: "GET /cycle_trains/1", body: body)
            server.respond(to: "PUT /cycle_trains/1", body: body)
            let train = try await CycleTrain.get(id: 1, in: store)
            let car = try #require(train.cars.first)
            #expect(car.train === train)
            #expect(car.occupancy == 3)
            #expect(store.count == 2)
            train.company = "Loop Line"
            try await train.save()
            #expect(try recordedBody(try #require(server.requests.last)) == ["cycle_train": ["company": "Loop Line"]])
        }
    }

    @Test("records of different models may share an id")
    func idsPerModel() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"{"train": {"id": 1, "cars": [{"id": 1, "train_id": 1}], "conductor": {"id": 1, "name": "Bo"}}}"#
            )
            let train = try await Spec.Train.get(id: 1, in: store)
            #expect(train.cars.first?.id == 1)
            #expect(train.conductor?.id == 1)
            #expect(store.count == 3)
            #expect(store.instance(of: Spec.Car.self, id: 1) === train.cars.first)
        }
    }

    @Test("embedded records go back as nested attributes when the model asks for it")
    func nestedAttributes() async throws {
        try await withCanned { server, store in
            let body = #"{"train": {"id": 1, "company": "N", "cars": [{"id": 5, "occupancy": 2, "train_id": 1}]}}"#
            server.respond(to: "GET /trains/1", body: body)
            server.respond(to: "PUT /trains/1", body: body)
            let train = try await NestedTrain.get(id: 1, in: store)
            train.cars.first?.occupancy = 3
            try await train.save()
            let sent = try recordedBody(try #require(server.requests.last))
            #expect(
                sent == [
                    "train": [
                        "company": "N",
                        "cars_attributes": [["id": 5, "occupancy": 3, "needs_repairs": nil, "train_id": 1]],
                    ]
                ])
        }
    }

    @Test("@References(.many) loads by ids once, reads in id order, and sends train_ids")
    func referencesMany() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /yards/1", body: #"{"yard": {"id": 1, "name": "North", "train_ids": [2, 1]}}"#)
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A"}}"#)
            server.respond(to: "GET /trains/2", body: #"{"train": {"id": 2, "company": "B"}}"#)
            server.respond(to: "PUT /yards/1", body: #"{"yard": {"id": 1, "name": "North", "train_ids": [2]}}"#)
            let yard = try await Yard.get(id: 1, in: store)
            #expect(yard.trains.isEmpty)
            let trains = try await yard.$trains.load()
            #expect(trains.map(\.company) == ["B", "A"])
            let count = server.requests.count
            _ = try await yard.$trains.load()
            #expect(server.requests.count == count)
            yard.trains = [trains[0]]
            #expect(yard.changes["trains"] == FieldChange(field: "trains", old: [2, 1], new: [2]))
            try await yard.save()
            #expect(try recordedBody(try #require(server.requests.last))["yard"]?["train_ids"] == [2])
            #expect(yard.trains.map(\.company) == ["B"])
        }
    }

    @Test("inverse: names the related property whose key points back")
    func inverse() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A"}}"#)
            server.respond(to: "GET /wagons?owner_id=1", body: #"{"wagons": [{"id": 3, "load": 9, "owner_id": 1}]}"#)
            let train = try await InverseTrain.get(id: 1, in: store)
            let wagons = try await train.$wagons.load()
            #expect(wagons.map(\.load) == [9])
            #expect(wagons.first?.owner === train)
        }
    }

    @Test("references are sent as train_id")
    func referencesSent() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/4", body: #"{"train": {"id": 4}}"#)
            server.respond(to: "POST /cars", body: #"{"car": {"id": 9, "occupancy": 3, "train_id": 4}}"#)
            let train = try await Seed.Train.get(id: 4, in: store)
            let car = Seed.Car()
            car.occupancy = 3
            car.train = train
            try await car.create(in: store)
            let sent = try recordedBody(try #require(server.requests.last))
            // Never set, so left out: the server's default applies.
            #expect(sent == ["car": ["occupancy": 3, "train_id": 4]])
            #expect(car.train === train)
        }
    }
}

/// Relationships whose wire key is not their Swift name.
@Suite("Relationships under keys of their own", .timeLimit(.minutes(5)))
struct KeyedRelationshipTests {
    @Resource(name: "car")
    final class KeyedCar {
        var occupancy: Int?
        /// `train_id` on the wire.
        @References(key: "train_id") var vehicle: Seed.Train?
    }

    @Resource(name: "train")
    final class KeyedTrain {
        var company: String?
        /// The embedded `cars` of a train's show.
        @Has(.embedsMany, key: "cars") var wagons: [KeyedCar]
    }

    @Test(
        "@References(key:) reads, loads and saves under its key; @Has(.embedsMany, key:) reads what is embedded there")
    func keys() async throws {
        try await withHarness { harness in
            let store = harness.store
            let train = try await KeyedTrain.get(id: 1, in: store)
            #expect(train.wagons.map(\.occupancy) == [40, 12])
            #expect(harness.journal.count == 1)

            let car = try await KeyedCar.get(id: 3, in: store)
            #expect(car.vehicle == nil)  // train 2 is not live: no request from a read
            let loaded = try await car.$vehicle.load()
            #expect(harness.journal.entries.last == "GET /trains/2")
            #expect(loaded?.company == "Deutsche Bahn AG")
            #expect(car.vehicle === loaded)

            car.vehicle = try await Seed.Train.get(id: 1, in: store)
            #expect(car.changes["vehicle"] == FieldChange(field: "vehicle", old: 2, new: 1))
            try await car.save()
            #expect(try harness.server.store.find("cars", id: "3")?["train_id"] == 1)
            // The embedded list follows the car that moved in, with no request.
            let requests = harness.journal.count
            #expect(train.wagons.contains { $0 === car })
            #expect(harness.journal.count == requests)
        }
    }
}
