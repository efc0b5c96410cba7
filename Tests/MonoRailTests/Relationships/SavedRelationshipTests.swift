import Foundation
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@testable import MonoRail

/// The seed's `References(Train.ImbedsOne, at: "monorail", aliasing: "monorail")`, with the id key
/// named as its `referenceIdField` would: read under `train`, sent as `train_id`.
@Resource(name: "car")
final class CarNamingItsTrain {
    var occupancy: Int?
    @References(.embedsOne, key: "train", idKey: "train_id") var monorail: Seed.Train?
}

/// A yard listing trains by id, plainly and embedded.
@Resource(name: "depot")
final class TrainDepot {
    var name: String?
    @References(.many) var trains: [Seed.Train]
}

@Resource(name: "depot")
final class DepotEmbeddingTrains {
    var name: String?
    @References(.embedsMany) var trains: [Seed.Train]
}

/// "Nothing lost on save": for each relationship kind, an edit is saved and read back from the
/// server with a raw request.
@Suite("Relationship edits reach the server")
struct SavedRelationshipTests {

    /// The server's copy of a record, read with a plain client.
    func stored(_ path: String, root: String, in harness: TestAPI) async throws -> [String: JSONValue] {
        let api = APIClient(configuration: .init(baseURL: harness.server.baseURL, retryPolicy: .none))
        return try await api.get(APIPath(verbatim: path), as: [String: JSONValue].self, root: root)
    }

    @Test("@References: the id changes and is sent as train_id")
    func referencesOne() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let car = try await Seed.Car.get(id: 1, in: harness.store)
            car.train = try await Seed.Train.get(id: 2, in: harness.store)
            try await car.save()
            #expect(try await stored("/cars/1", root: "car", in: harness)["train_id"] == 2)
            #expect(!car.hasChanges)
        }
    }

    @Test("@References(.many): the ids are sent as train_ids")
    func referencesMany() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let depot = TrainDepot()
            depot.name = "North"
            depot.trains = try await Seed.Train.get(in: harness.store)
            try await depot.create(in: harness.store)
            let id = try #require(depot.id)
            depot.trains = [try await Seed.Train.get(id: 2, in: harness.store)]
            try await depot.save()
            #expect(try await stored("/depots/\(id)", root: "depot", in: harness)["train_ids"] == [2])
        }
    }

    @Test("@References(.embedsOne): read embedded, an assignment is sent as its id")
    func embeddedReference() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let car = try await CarEmbeddingTrain.get(id: 1, in: harness.store)
            #expect(car.train?.company == "MonoRail Co.")
            let other = try await Seed.Train.get(id: 2, in: harness.store)
            car.train = other
            #expect(car.hasChanges)
            try await car.save()
            #expect(try await stored("/cars/1", root: "car", in: harness)["train_id"] == 2)
            #expect(!car.hasChanges)
            // Read back, the server embeds the new train: the same instance.
            try await car.fetch()
            #expect(car.train === other)
        }
    }

    @Test("@References(.embedsOne, idKey:) sends the seed's referenceIdField")
    func embeddedReferenceIDKey() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let car = try await CarNamingItsTrain.get(id: 3, in: harness.store)
            #expect(car.monorail?.id == 2)
            car.monorail = try await Seed.Train.get(id: 1, in: harness.store)
            try await car.save()
            #expect(try await stored("/cars/3", root: "car", in: harness)["train_id"] == 1)
        }
    }

    @Test("@References(.embedsMany): the ids are sent as train_ids")
    func embeddedReferences() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let depot = DepotEmbeddingTrains()
            depot.name = "South"
            depot.trains = try await Seed.Train.get(in: harness.store).reversed()
            try await depot.create(in: harness.store)
            let id = try #require(depot.id)
            #expect(try await stored("/depots/\(id)", root: "depot", in: harness)["train_ids"] == [2, 1])
        }
    }

    @Test("an embedded reference to a record not yet created is refused, and nothing is sent")
    func embeddedReferenceToNewRecord() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let car = try await CarEmbeddingTrain.get(id: 1, in: harness.store)
            let unsaved = Seed.Train()
            car.train = unsaved
            let requests = harness.journal.count
            let error = await #expect(throws: APIError.self) { try await car.save() }
            #expect(error?.code == .encodingFailed)
            #expect(error?.message.contains("CarEmbeddingTrain.train") == true)
            #expect(harness.journal.count == requests)
            #expect(car.hasChanges)
        }
    }

    @Test("@Has(.many) assignment points the cars here and the others nowhere, saved with each car")
    func hasMany() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let train = try await Seed.Train.get(id: 1, in: harness.store)
            let cars = try await train.$cars.load()
            #expect(cars.map(\.id) == [1, 2])
            let third = try await Seed.Car.get(id: 3, in: harness.store)
            train.cars = [cars[1], third]
            #expect(train.cars.map(\.id) == [2, 3])
            #expect(third.train === train)
            #expect(cars[0].train == nil)
            #expect(cars[0].hasChanges && third.hasChanges && !cars[1].hasChanges)
            for car in [cars[0], third] { try await car.save() }
            let onTrain = try await APIClient(
                configuration: .init(baseURL: harness.server.baseURL, retryPolicy: .none)
            ).get("/cars", parameters: ["train_id": 1], as: [[String: JSONValue]].self, root: "cars")
            #expect(onTrain.map { $0["id"] } == [2, 3])
            #expect(try await stored("/cars/1", root: "car", in: harness)["train_id"] == .null)
        }
    }

    @Test("@Has(.one) assignment moves the conductor; the one it replaces points nowhere")
    func hasOne() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let trainA = try await Seed.Train.get(id: 1, in: harness.store)
            let trainB = try await Seed.Train.get(id: 2, in: harness.store)
            let bill = try #require(try await trainA.$conductor.load())
            let ada = try #require(try await trainB.$conductor.load())
            trainB.conductor = bill
            #expect(trainB.conductor === bill)
            #expect(trainA.conductor == nil)
            #expect(ada.train == nil)
            try await bill.save()
            try await ada.save()
            #expect(
                try await stored("/conductors/\(try #require(bill.id))", root: "conductor", in: harness)["train_id"]
                    == 2)
            #expect(
                try await stored("/conductors/\(try #require(ada.id))", root: "conductor", in: harness)["train_id"]
                    == .null)
        }
    }

    @Test("@Has(.embedsOne) and (.embedsMany) assignments point the children here; the owner's save saves them")
    func hasEmbedded() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let trainB = try await Spec.Train.get(id: 2, in: harness.store)
            let trainA = try await Spec.Train.get(id: 1, in: harness.store)
            let bill = try #require(trainA.conductor)
            trainB.conductor = bill
            // Nothing of the train's own record changed; the assignment waits for its save.
            #expect(trainB.changes.isEmpty)
            #expect(trainB.hasChanges)
            #expect(trainB.conductor === bill)
            #expect(bill.train === trainB)
            let car = try #require(trainA.cars.first)
            trainB.cars = trainB.cars + [car]
            #expect(car.train === trainB)
            #expect(trainA.cars.count == 1)
            try await trainB.save()
            #expect(!trainB.hasChanges && !car.hasChanges && !bill.hasChanges)
            try await trainB.fetch()
            #expect(trainB.cars.map(\.id) == [1, 3])
            #expect(trainB.conductor === bill)
            #expect(try await stored("/conductors/1", root: "conductor", in: harness)["train_id"] == 2)
        }
    }

    @Test("@Has assigned before the owner exists: read back as assigned, carried out on create")
    func hasBeforeCreate() async throws {
        try await withHarness(schema: .trainsEmbeddedInCars) { harness in
            let car = try await Seed.Car.get(id: 1, in: harness.store)
            let train = Seed.Train()
            train.company = "New Line"
            train.cars = [car]
            #expect(train.cars.map(\.id) == [1])
            #expect(!car.hasChanges)  // nothing to point at until the train has an id
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            #expect(car.train === train)
            #expect(train.cars.map(\.id) == [1])
            try await car.save()
            #expect(try await stored("/cars/1", root: "car", in: harness)["train_id"] == id.jsonValue)
        }
    }
}

/// Rails' `accepts_nested_attributes_for` against the reference server: a train and its new cars in
/// one save, the server's ids back in the app's own car objects.
@Suite("Nested attributes: a parent and its new children in one save", .timeLimit(.minutes(2)))
struct NestedAttributesSaveTests {
    @Test("a create and a save send cars_attributes; the new cars get their ids in the same objects")
    func parentAndChildren() async throws {
        try await withHarness { harness in
            let train = NestedTrain()
            train.company = "Nested Rail"
            let first = Spec.Car()
            first.occupancy = 10
            let second = Spec.Car()
            second.occupancy = 20
            train.cars = [first, second]
            try await train.create(in: harness.store)
            #expect(harness.server.journal.entries.last == "POST /trains")
            let trainID = try #require(train.id)
            let firstID = try #require(first.id, "the app's own car object took the server's id")
            #expect(second.id != nil && second.id != first.id)
            #expect(train.cars.count == 2 && train.cars[0] === first && train.cars[1] === second)
            #expect(harness.store.instance(of: Spec.Car.self, id: firstID) === first)
            let stored = try #require(try harness.server.store.find("cars", id: firstID.description))
            #expect(stored["train_id"] == trainID.jsonValue)
            #expect(stored["occupancy"] == 10)

            // An edit of one, and a third made here: one save.
            first.occupancy = 11
            let third = Spec.Car()
            third.occupancy = 30
            train.cars = [first, second, third]
            try await train.save()
            #expect(third.id != nil)
            #expect(train.cars.map(\.occupancy) == [11, 20, 30])
            #expect(try harness.server.store.find("cars", id: firstID.description)?["occupancy"] == 11)
            let cars = try #require(harness.server.store.schema.resource(plural: "cars"))
            #expect(try harness.server.store.list(cars, filters: ["train_id": trainID.description]).total == 3)
        }
    }

    @Test("a child refused refuses the whole save: nothing written, the messages under cars.occupancy")
    func refusedChild() async throws {
        try await withHarness { harness in
            let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
            let before = try harness.server.store.list(trains, filters: [:]).total
            let train = NestedTrain()
            train.company = "Half Rail"
            let bad = Spec.Car()
            bad.occupancy = -1
            train.cars = [bad]
            let error = try await #require(throws: APIError.self) { try await train.create(in: harness.store) }
            #expect(error.code == .validationFailed)
            #expect(!error.errors["cars.occupancy"].isEmpty, "\(error.errors)")
            #expect(try harness.server.store.list(trains, filters: [:]).total == before)
            #expect(train.id == nil && bad.id == nil)
        }
    }
}
