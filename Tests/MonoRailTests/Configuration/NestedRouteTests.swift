import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// APIs as they are: Rails' nested resources, a relationship's own route, and records read from any
/// path of the API — against the reference server, which nests every `belongs_to`.
enum Nested {
    /// A train whose cars are read at `/trains/:id/cars`.
    @Resource(name: "train")
    final class Train {
        var company: String?
        @Has(route: ":path/:id/cars") var cars: [Car]
    }

    /// Cars living under their train, every action on the nested route.
    @Resource(name: "car")
    final class Car {
        var occupancy: Int?
        @References var train: Train?

        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.conventions.routes = ResourceRoutes(
                index: "/trains/:train_id/cars", show: "/trains/:train_id/cars/:id", create: "/trains/:train_id/cars",
                update: "/trains/:train_id/cars/:id", destroy: "/trains/:train_id/cars/:id")
        }
    }

    /// The same cars at the reference server's flat routes, for a read at any path.
    @Resource(name: "car")
    final class FlatCar {
        var occupancy: Int?
        @References var train: Train?
    }

    /// A book of an author, as a FastAPI app nests them, whose records do not repeat the author.
    @Resource(name: "book")
    final class Book {
        var title: String?
        @References var author: Author?
    }

    @Resource(name: "author")
    final class Author {
        var name: String?
        @Has(route: "/authors/:id/books") var books: [Book]
    }
}

/// Apic's own example: a repository whose endpoint answers live models.
struct CarsRepository: Repository {
    let client: APIClient
    let store: ResourceStore

    func cars(of train: Int) -> RequestHandle<[Nested.FlatCar]> {
        request(.get, "/trains/\(train)/cars", in: store)
    }
}

@Suite("Nested routes and any path", .timeLimit(.minutes(5)))
struct NestedRouteTests {
    @Test("a model on Rails' nested routes takes :train_id from the filter, the parameters, or the record's reference")
    func childRoutes() async throws {
        try await withHarness { harness in
            let store = harness.store
            let before = harness.journal.count
            let cars = try await Nested.Car.get(where: ["train_id": 1], in: store)
            #expect(cars.map(\.occupancy) == [40, 12])
            let car = try await Nested.Car.get(id: 3, parameters: ["train_id": 2], in: store)
            #expect(car.occupancy == 80)
            car.occupancy = 81
            try await car.save()
            let train = try await Nested.Train.get(id: 2, in: store)
            let made = Nested.Car()
            made.occupancy = 7
            made.train = train
            try await made.create(in: store)
            try await made.delete()
            let madeID = try #require(made.id)
            #expect(
                Array(harness.journal.entries.dropFirst(before)) == [
                    "GET /trains/1/cars", "GET /trains/2/cars/3", "PUT /trains/2/cars/3", "GET /trains/2",
                    "POST /trains/2/cars", "DELETE /trains/2/cars/\(madeID)",
                ])
            // The server put it where the path said.
            #expect(try harness.server.store.find("cars", id: "3")?["occupancy"] == 81)
        }
    }

    @Test("@Has(route:) loads train.$cars and pages train.$cars.query() at the relationship's own route")
    func relationshipRoute() async throws {
        try await withHarness { harness in
            let store = harness.store
            let train = try await Nested.Train.get(id: 1, in: store)
            let before = harness.journal.count
            try await train.$cars.load()
            #expect(train.cars.map(\.occupancy) == [40, 12])
            let query = try await train.$cars.query(pageSize: 1)
            #expect(query.instances.map(\.occupancy) == [40])
            try await query.loadNextPage()
            #expect(query.instances.map(\.occupancy) == [40, 12])
            let paths = harness.journal.entries.dropFirst(before).map { $0.split(separator: "?").first ?? "" }
            #expect(paths.count >= 3)
            #expect(paths.allSatisfy { $0 == "GET /trains/1/cars" }, "\(paths)")
            #expect(!harness.journal.entries.dropFirst(before).contains { $0.contains("train_id") })
        }
    }

    @Test("records a nested route lists without the owner's key belong to the owner")
    func recordsWithoutKey() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /authors/1", body: #"{"author": {"id": 1, "name": "Le Guin"}}"#)
            server.respond(
                to: "GET /authors/1/books",
                body: #"{"books": [{"id": 7, "title": "The Dispossessed"}, {"id": 8, "title": "Lathe"}]}"#)
            let author = try await Nested.Author.get(id: 1, in: store)
            try await author.$books.load()
            #expect(author.books.map(\.title) == ["The Dispossessed", "Lathe"])
            let book = try #require(store.instance(of: Nested.Book.self, id: 7))
            #expect(book.author === author)
            #expect(!book.hasChanges)
        }
    }

    @Test("any path of the API reads into live instances: Model.get(path:) and a Repository's endpoint")
    func anyPath() async throws {
        try await withHarness { harness in
            let store = harness.store
            let second = try await Nested.FlatCar.get(path: "/trains/2/cars", in: store)
            #expect(second.map(\.occupancy) == [80])
            #expect(second.first === (try await Nested.FlatCar.get(id: 3, in: store)))
            let onOrigin = try await Nested.FlatCar.get(
                path: APIPath(verbatim: harness.server.baseURL.absoluteString + "/trains/1/cars"), in: store)
            #expect(onOrigin.map(\.occupancy) == [40, 12])

            let repository = CarsRepository(client: APIClient(baseURL: harness.server.baseURL), store: store)
            let cars = try await repository.cars(of: 1).value
            #expect(cars.map(\.occupancy) == [40, 12])
            #expect(cars.first === onOrigin.first)
            let refused = await #expect(throws: APIError.self) {
                let handle: RequestHandle<[Nested.FlatCar]> = repository.request(.post, "/trains/1/cars", in: store)
                return try await handle.value
            }
            #expect(refused?.code == .invalidRequest)

            // The repository's own client sends: its base URL, not the store's API root.
            let trains = CarsRepository(
                client: APIClient(baseURL: harness.server.baseURL.appendingPathComponent("trains")), store: store)
            let handle: RequestHandle<[Nested.FlatCar]> = trains.request(.get, "/2/cars", in: store)
            let viaOwnClient = try await handle.value
            #expect(viaOwnClient.map(\.occupancy) == [80])
            #expect(viaOwnClient.first === second.first)
        }
    }

    @Test(
        "a placeholder's value is one percent-encoded segment, whatever it holds",
        arguments: [
            ("../admin", "/trains/..%2Fadmin/cars"), ("?x=1", "/trains/%3Fx%3D1/cars"), ("#top", "/trains/%23top/cars"),
            ("a%2Fb", "/trains/a%252Fb/cars"), ("..", "/trains/%2E%2E/cars"),
        ])
    func encodedValues(_ value: String, _ path: String) async throws {
        try await withHarness { harness in
            let error = await #expect(throws: APIError.self) {
                try await Nested.Car.get(where: ["train_id": .string(value)], in: harness.store)
            }
            #expect(error?.statusCode == 404)
            #expect(harness.journal.entries.last == "GET \(path)")
        }
    }

    @Test("an empty, missing or unusable placeholder value, or a path off the API, is refused before any request")
    func refusedBeforeRequest() async throws {
        try await withHarness { harness in
            let store = harness.store
            let filters: [[String: JSONValue]] = [["train_id": ""], [:], ["train_id": [1, 2]], ["train_id": .null]]
            for filter in filters {
                let error = await #expect(throws: APIError.self) { try await Nested.Car.get(where: filter, in: store) }
                #expect(error?.code == .invalidRequest, "\(filter)")
                #expect(error?.message.contains(":train_id") == true, "\(error?.message ?? "")")
            }
            // A new car with no train has nowhere to be created.
            let orphan = Nested.Car()
            let error = await #expect(throws: APIError.self) { try await orphan.create(in: store) }
            #expect(error?.code == .invalidRequest)
            for path: APIPath in [
                "http://example.com/trains/1/cars", "//example.com/trains", "/trains/../admin", "/trains/%2e%2e/x",
                APIPath(verbatim: "http://127.0.0.1:1/trains"),
            ] {
                let error = await #expect(throws: APIError.self) { try await Nested.FlatCar.get(path: path, in: store) }
                #expect(error?.code == .invalidRequest, "\(path)")
            }
            #expect(harness.journal.count == 0)
        }
    }

    @Test("the reference server nests every belongs_to: a record under another owner is not found")
    func serverNesting() async throws {
        try await withHarness { harness in
            let client = APIClient(baseURL: harness.server.baseURL)
            let listed = try await client.send(APIRequest(method: .get, path: "/trains/2/cars")).decode(JSONValue.self)
            #expect(listed["cars"]?.arrayValue?.count == 1)
            for path: APIPath in [
                "/trains/2/cars/1", "/trains/99/cars", "/conductors/1/cars", "/trains/1/conductors/2",
            ] {
                let error = await #expect(throws: APIError.self) {
                    try await client.send(APIRequest(method: .get, path: path))
                }
                #expect(error?.statusCode == 404, "\(path)")
            }
            // The path names the owner, whatever the body says.
            let created = try await client.send(
                APIRequest(
                    method: .post, path: "/trains/2/cars",
                    body: .tree(["car": ["occupancy": 3, "train_id": 1]], files: FileAttachments())))
            let car = try created.decode(JSONValue.self)
            #expect(car["car"]?["train_id"] == 2)
        }
    }
}
