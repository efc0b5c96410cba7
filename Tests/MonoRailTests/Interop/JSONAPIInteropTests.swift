import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailTesting
import TestServer
import Testing

/// MonoRail's models against a real djangorestframework-jsonapi app with the `.jsonAPI` preset:
/// the app pages by default (10 a page), answers in JSON:API documents with `included`, and
/// refuses records with error objects pointing at their fields.
@Suite("djangorestframework-jsonapi interop", .timeLimit(.minutes(5)))
struct JSONAPIInteropTests {
    typealias Train = Rail.Train
    typealias Car = Rail.Car
    typealias Depot = Rail.Depot

    func withApp(extraTrains: Int = 0, _ body: (ResourceStore, PythonServer) async throws -> Void) async throws {
        let server = try await PythonServer.jsonAPI(extraTrains: extraTrains)
        defer { server.stop() }
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .jsonAPI
        try await body(ResourceStore(configuration: configuration), server)
    }

    @Test("a record with its included relationships: to-one, to-many, and a @Has from the children's linkage")
    func included() async throws {
        try await withApp { store, _ in
            let train = try await Train.get(id: 1, include: ["depots", "cars"], in: store)
            #expect(train.id == "1")
            #expect(train.company == "MonoRail Co.")
            #expect(train.numberOfCars == 5)
            #expect(train.depots.map(\.name) == ["North Yard", "South Yard"])
            #expect(train.cars.map(\.occupancy) == [40, 12])
            #expect(train.cars.allSatisfy { $0.train === train })
            // Ids travel as strings; an integer names the same record and instance.
            #expect(try await Train.get(id: "1", in: store) === train)
            #expect(!train.hasChanges)
        }
    }

    @Test("a linkage to a record not included is kept as its id, and loads on demand")
    func linkageNotIncluded() async throws {
        try await withApp { store, _ in
            let car = try await Car.get(id: 3, in: store)
            #expect(car.$train.id == "2")
            #expect(car.train == nil)
            let train = try await car.$train.load()
            #expect(train?.company == "Deutsche Bahn AG")
            #expect(car.train === train)
        }
    }

    @Test("a @Has loads from the relationship's links.related; a @References(.many) by the ids of its linkage")
    func relatedLinks() async throws {
        try await withApp { store, _ in
            let train = try await Train.get(id: 1, in: store)
            #expect(train.cars.isEmpty, "not included: nothing live yet")
            let cars = try await train.$cars.load()
            #expect(cars.map(\.occupancy) == [40, 12])
            #expect(cars.allSatisfy { $0.$train.id == "1" })
            let depots = try await train.$depots.load()
            #expect(depots.map(\.city) == ["Hamburg", "Munich"])
        }
    }

    @Test("a sparse fieldset merges as a partial record: fields it did not carry stay, unchanged")
    func sparseFieldsets() async throws {
        try await withApp { store, _ in
            let train = try await Train.get(id: 2, in: store)
            #expect(train.numberOfCars == 12)
            let other = ResourceStore(configuration: store.configuration)
            let remote = try await Train.get(id: 2, in: other)
            remote.company = "DB Fernverkehr"
            remote.numberOfCars = 14
            try await remote.save()

            let same = try await Train.get(id: 2, parameters: ["fields[trains]": "company"], in: store)
            #expect(same === train)
            #expect(train.company == "DB Fernverkehr")
            #expect(train.numberOfCars == 12, "not in the fieldset: left as it was")
            #expect(train.$depots.ids == ["2"], "not in the fieldset either")
            #expect(!train.hasChanges)
        }
    }

    @Test("a sparse fieldset stored: the next launch reads from the file every field the full read stored")
    func sparseFieldsetStored() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withApp { store, _ in
                let first = ResourceStore(configuration: store.configuration, storage: try SQLiteStorage(path: path))
                let train = try await Train.get(id: 2, policy: .networkFirst, in: first)
                #expect(train.numberOfCars == 12)
                let sparse = try await Train.get(
                    id: 2, parameters: ["fields[trains]": "company"], policy: .networkFirst, in: first)
                #expect(sparse === train)
                try await first.configuration.storage?.flush()

                // The next launch, offline.
                let next = ResourceStore(configuration: store.configuration, storage: try SQLiteStorage(path: path))
                let stored = try await Train.get(id: 2, policy: .cacheOnly, in: next)
                #expect(stored.company == "Deutsche Bahn AG")
                #expect(stored.numberOfCars == 12, "not in the fieldset: kept on disk as the full read stored it")
                #expect(stored.$depots.ids == ["2"], "nor the relationship")
            }
        }
    }

    @Test("writes: POST answered 201, PATCH with only what changed, relationships both ways, DELETE 204")
    func writes() async throws {
        try await withApp { store, _ in
            let north = try await Depot.get(id: 1, in: store)
            let train = Train()
            train.company = "JSON Rail"
            train.numberOfCars = 3
            train.depots = [north]
            try await train.create(in: store)
            let id = try #require(train.id)
            #expect(train.company == "JSON Rail")
            #expect(train.$depots.ids == ["1"])

            let car = Car()
            car.occupancy = 9
            car.train = train
            try await car.create(in: store)
            #expect(car.$train.id == id)

            // Changed on the server by someone else meanwhile: a PATCH of only `max_speed` leaves it.
            let other = ResourceStore(configuration: store.configuration)
            let remote = try await Train.get(id: id, in: other)
            remote.numberOfCars = 4
            try await remote.save()

            train.maxSpeed = 120
            try await train.save()
            #expect(train.maxSpeed == 120)
            #expect(train.numberOfCars == 4, "the answer carries the server's record; the PATCH did not send 3")

            train.depots = []
            try await train.save()
            let fresh = try await Train.get(id: id, in: other)
            #expect(fresh.$depots.ids.isEmpty)
            #expect(fresh.maxSpeed == 120)

            try await car.delete()
            #expect(car.isDeleted)
            let error = try await #require(throws: APIError.self) { try await Car.get(id: car.id ?? 0, in: other) }
            #expect(error.statusCode == 404)
        }
    }

    @Test("a to-many membership changes at the relationship's endpoint: POST adds, DELETE removes, PATCH replaces")
    func relationshipEndpoints() async throws {
        try await withApp { store, _ in
            let train = try await Train.get(id: 2, in: store)
            let north = try await Depot.get(id: 1, in: store)
            let south = try await Depot.get(id: 2, in: store)
            train.company = "An edit the membership requests leave unsent"
            let other = ResourceStore(configuration: store.configuration)

            try await train.$depots.add([north])
            #expect(train.$depots.ids == ["1", "2"], "the members the server answered with, in its order")
            #expect(
                try await Train.get(id: 2, in: other).$depots.ids.sorted { $0.description < $1.description } == [
                    "1", "2",
                ])

            try await train.$depots.remove([south])
            #expect(train.$depots.ids == ["1"])
            #expect(try await Train.get(id: 2, in: other).$depots.ids == ["1"])

            try await train.$depots.replace(with: [south, north])
            #expect(Set(try await Train.get(id: 2, in: other).$depots.ids) == ["1", "2"])
            #expect(Set(train.$depots.ids) == ["1", "2"])
            #expect(train.changes.keys.sorted() == ["company"], "only the unsent edit is left")
            #expect(try await Train.get(id: 2, in: other).company == "Deutsche Bahn AG")
        }
    }

    @Test("error objects with source.pointer become the instance's per-field errors, their codes kept")
    func validationErrors() async throws {
        try await withApp { store, _ in
            let nameless = Train()
            nameless.numberOfCars = 3
            let error = try await #require(throws: APIError.self) { try await nameless.create(in: store) }
            #expect(error.code == .validationFailed)
            #expect(error.statusCode == 400)
            #expect(error.errors["company"] == ["This field is required."])
            #expect(nameless.errors["company"] == ["This field is required."])
            let object = try #require(error.errorObjects.first)
            #expect(object.pointer == "/data/attributes/company")
            #expect(object.code == "required")
            #expect(object.status == "400")

            let depot = Depot()
            depot.city = "Bremen"
            let refused = try await #require(throws: APIError.self) { try await depot.create(in: store) }
            #expect(refused.code == .validationFailed)
            #expect(refused.errors["name"] == ["This field is required."])
        }
    }

    @Test("filters as filter[key], IN and ranges as filter[key.in] and filter[key.gte], order as sort")
    func filters() async throws {
        try await withApp(extraTrains: 20) { store, _ in
            let found = try await Train.get(where: ["company": "Deutsche Bahn AG"], in: store)
            #expect(found.map(\.company) == ["Deutsche Bahn AG"])
            let cars = try await Car.get(where: ["train": 1], in: store)
            #expect(cars.map(\.occupancy) == [40, 12])

            // Bulk trains run at 0…19 km/h; the seeded ones at 46.8 and 300.
            let trains = try await Train.query(
                where: ["company": ["MonoRail Co.", "Deutsche Bahn AG", "Bulk 7"], "max_speed": .atLeast(7)],
                order: [.descending("max_speed")], in: store)
            #expect(trains.instances.map(\.company) == ["Deutsche Bahn AG", "MonoRail Co.", "Bulk 7"])

            let searched = try await Train.search("Bahn", in: store)
            #expect(searched.map(\.company) == ["Deutsche Bahn AG"])
        }
    }

    @Test("pages by links.next with page[number]/page[size], the total from meta.pagination.count")
    func paging() async throws {
        try await withApp(extraTrains: 48) { store, _ in
            // The app pages by default: get() returns what one request returned, its first page.
            let first = try await Train.get(in: store)
            #expect(first.count == 10)

            let trains = try await Train.query(pageSize: 20, in: store)
            #expect(trains.instances.count == 20)
            #expect(trains.total == 50)
            while trains.hasNextPage { try await trains.loadNextPage() }
            #expect(trains.instances.count == 50)
            #expect(trains.instances.compactMap { $0.id?.description } == (1...50).map(String.init))

            let all = try await Train.getAll(in: store)
            #expect(all.count == 50)
        }
    }
}
