import Foundation
import MonoRail
import MonoRailServer
import MonoRailServerPostgres
import TestServer
import Testing

struct Car: Codable, Sendable, Equatable {
    var id: Int?
    var occupancy: Int?
    var needsRepairs: Bool?
    var trainId: Int?
}

struct Conductor: Codable, Sendable {
    var id: Int?
    var name: String?
    var trainId: Int?
}

struct Train: Codable, Sendable {
    var id: Int?
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool?
    var builtAt: Date?
    var tags: [String]?
    var cars: [Car]?
    var conductor: Conductor?
    var createdAt: Date?
    var updatedAt: Date?
}

/// `MONORAIL_SERVER_DATABASE=postgres` runs the suites that use ``withServer(schema:configuration:_:)``
/// again with the server's records in PostgreSQL (`.ci/run` does): a database for each SQLite path.
let serversRunOnPostgres = ProcessInfo.processInfo.environment["MONORAIL_SERVER_DATABASE"] == "postgres"

/// Starts a reference server on a free port (the built-in schema unless told otherwise) and a
/// client for it without retries, runs `body`, and stops the server.
func withServer(
    schema: ServerSchema = .trains,
    configuration: ReferenceServer.Configuration = .init(),
    _ body: (RunningReferenceServer, APIClient) async throws -> Void
) async throws {
    var configuration = configuration
    configuration.port = 0
    let server: ReferenceServer
    if serversRunOnPostgres {
        let store = try RecordStore(
            schema: schema, location: await PostgresTestDatabase.database(for: configuration.databasePath),
            changeRetention: configuration.changeFeed.retention)
        server = ReferenceServer(store: store, configuration: configuration)
    } else {
        server = try ReferenceServer(schema: schema, configuration: configuration)
    }
    let running = try await server.start()
    let client = APIClient(
        configuration: .init(baseURL: running.baseURL, transport: MonoRail.defaultTransport, retryPolicy: .none))
    do {
        try await body(running, client)
    } catch {
        await running.stop()
        throw error
    }
    await running.stop()
}

@Suite("Reference server: Rails conventions", .timeLimit(.minutes(5)))
struct ReferenceServerTests {
    @Test("show answers the singular root with embedded relationships")
    func show() async throws {
        try await withServer { _, client in
            let train: Train = try await client.get("/trains/1", root: "train")
            #expect(train.id == 1)
            #expect(train.company == "MonoRail Co.")
            #expect(train.maxSpeed == 46.8)
            #expect(train.tags == ["monorail"])
            #expect(train.cars?.map(\.occupancy) == [40, 12])
            #expect(train.conductor?.name == "Bill")
            #expect(train.createdAt != nil)
            let raw = try await client.send(APIRequest(method: .get, path: "/trains/1"))
            let text = String(decoding: raw.body, as: UTF8.self)
            #expect(text.hasPrefix(#"{"train":{"#))
            #expect(
                text.range(of: #""created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z""#, options: .regularExpression)
                    != nil)
        }
    }

    @Test("index answers the plural root, filters by any field and ignores unknown parameters")
    func index() async throws {
        try await withServer { _, client in
            let all: [Car] = try await client.get("/cars", root: "cars")
            #expect(all.count == 3)
            let filtered: [Car] = try await client.get(
                "/cars", parameters: ["train_id": 1, "bogus": "x"], root: "cars")
            #expect(filtered.map(\.id) == [1, 2])
            let repairs: [Car] = try await client.get("/cars", parameters: ["needs_repairs": true], root: "cars")
            #expect(repairs.map(\.id) == [2])
            let none: [Car] = try await client.get("/cars", parameters: ["occupancy": "many"], root: "cars")
            #expect(none.isEmpty)
            let response = try await client.send(APIRequest(method: .get, path: "/cars", query: ["train_id": 1]))
            #expect(response.response.headerFields[.init("X-Total-Count")!] == "2")
        }
    }

    @Test("create accepts wrapped and bare bodies and answers 201 with Location")
    func create() async throws {
        try await withServer { _, client in
            let wrapped = try await client.send(
                APIRequest(
                    method: .post, path: "/trains",
                    body: .json(["company": "Wrapped", "built_at": "2015-12-30T18:12:33.000-0500"]), bodyRoot: "train",
                    responseRoots: ["train"]))
            #expect(wrapped.statusCode == 201)
            let created = try wrapped.decode(Train.self)
            #expect(wrapped.response.headerFields[.location] == "/trains/\(created.id ?? 0)")
            #expect(created.builtAt == Date(timeIntervalSince1970: 1_451_517_153))
            let bareBody: JSONValue = ["company": "Bare", "number_of_cars": 3]
            let bare = try await client.send(
                APIRequest(method: .post, path: "/trains", body: .json(bareBody), responseRoots: ["train"])
            ).decode(Train.self)
            #expect(bare.company == "Bare")
            let fetched: Train = try await client.get("/trains/\(bare.id ?? 0)", root: "train")
            #expect(fetched.numberOfCars == 3)
        }
    }

    static let invalidTrains: [(JSONValue, String, String)] = [
        (["company": ""], "company", "can't be blank"),
        (["company": "X", "max_speed": "fast"], "max_speed", "is not a number"),
        (["company": "X", "max_speed": 2000], "max_speed", "must be less than or equal to 1000"),
        (["company": "X", "number_of_cars": 2.5], "number_of_cars", "must be an integer"),
        (["company": "X", "in_service": "yes"], "in_service", "must be true or false"),
        (["company": "X", "built_at": "yesterday"], "built_at", "is not a valid datetime"),
        (
            ["company": .string(String(repeating: "x", count: 201))], "company",
            "is too long (maximum is 200 characters)"
        ),
        (["company": 5], "company", "must be a string"),
    ]

    @Test("validation errors come back as Rails 422s and nothing is written", arguments: invalidTrains)
    func validation(body: JSONValue, field: String, message: String) async throws {
        try await withServer { running, client in
            let error = await #expect(throws: APIError.self) {
                try await client.post("/trains", body: body, root: "train", as: Train.self)
            }
            #expect(error?.code == .validationFailed)
            #expect(error?.statusCode == 422)
            #expect(error?.errors[field] == [message])
            let trains: [Train] = try await client.get("/trains", root: "trains")
            #expect(trains.count == 2)
        }
    }

    @Test("a belongs_to reference must exist")
    func referenceMustExist() async throws {
        try await withServer { _, client in
            let error = await #expect(throws: APIError.self) {
                try await client.post(
                    "/cars", body: ["occupancy": 1, "train_id": 99] as JSONValue, root: "car", as: Car.self)
            }
            #expect(error?.errors["train"] == ["must exist"])
            #expect(error?.errors.fullMessages == ["Train must exist"])
        }
    }

    @Test("PUT and PATCH update the given fields and keep the rest")
    func update() async throws {
        try await withServer { _, client in
            let put: Train = try await client.put("/trains/1", body: ["max_speed": 55.5] as JSONValue, root: "train")
            #expect(put.maxSpeed == 55.5)
            #expect(put.company == "MonoRail Co.")
            let patched: Train = try await client.patch(
                "/trains/1", body: ["company": "Renamed"] as JSONValue, root: "train")
            #expect(patched.company == "Renamed")
            #expect(patched.maxSpeed == 55.5)
            #expect((patched.updatedAt ?? .distantPast) >= (patched.createdAt ?? .distantFuture))
            let error = await #expect(throws: APIError.self) {
                try await client.patch("/trains/1", body: ["company": ""] as JSONValue, root: "train", as: Train.self)
            }
            #expect(error?.statusCode == 422)
            let unchanged: Train = try await client.get("/trains/1", root: "train")
            #expect(unchanged.company == "Renamed")
            let missing = await #expect(throws: APIError.self) {
                try await client.patch(
                    "/trains/999", body: ["company": "X"] as JSONValue, root: "train", as: Train.self)
            }
            #expect(missing?.statusCode == 404)
        }
    }

    @Test("DELETE answers 204, then the record is gone")
    func delete() async throws {
        try await withServer { _, client in
            let response = try await client.delete("/cars/3")
            #expect(response.statusCode == 204)
            let error = await #expect(throws: APIError.self) {
                let _: Car = try await client.get("/cars/3", root: "car")
            }
            #expect(error?.statusCode == 404)
            #expect(error?.data == ["error": "Not Found"])
            let again = await #expect(throws: APIError.self) { try await client.delete("/cars/3") }
            #expect(again?.statusCode == 404)
        }
    }

    @Test(
        "bad requests get the right status and a JSON error, never a crash",
        arguments: [
            ("POST", "/trains", "{bad", 400),
            ("POST", "/trains", "[1,2]", 400),
            ("POST", "/trains", "", 400),
            ("GET", "/nothing", "", 404),
            ("GET", "/nothing/1", "", 404),
            ("GET", "/trains/abc", "", 404),
            ("GET", "/trains/..%2Fcars", "", 404),
            ("GET", "/trains/1%00", "", 404),
            ("DELETE", "/trains/-1", "", 404),
            ("PUT", "/trains/1", "{\"train\": ", 400),
        ])
    func badRequests(method: String, path: String, body: String, status: Int) async throws {
        try await withServer { running, client in
            var request = APIRequest(
                method: .init(method)!, path: APIPath(verbatim: path),
                body: body.isEmpty && method == "GET"
                    ? nil : .raw(.data(Data(body.utf8)), contentType: "application/json"))
            request.options.retryPolicy = RetryPolicy.none
            let error = await #expect(throws: APIError.self) { try await client.send(request) }
            #expect(error?.statusCode == status)
            #expect(error?.parsedBody?["error"]?.stringValue != nil, "a JSON error body")
            let health: Train = try await client.get("/trains/1", root: "train")
            #expect(health.id == 1)
        }
    }

    @Test("a body over the limit is refused with 413")
    func hugeBody() async throws {
        try await withServer(configuration: .init(maxBodySize: 1000)) { _, client in
            let error = await #expect(throws: APIError.self) {
                try await client.post(
                    "/trains", body: ["company": .string(String(repeating: "x", count: 5000))] as JSONValue,
                    root: "train",
                    as: Train.self)
            }
            #expect(error?.statusCode == 413)
        }
    }
}
