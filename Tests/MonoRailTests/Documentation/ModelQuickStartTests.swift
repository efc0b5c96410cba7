import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import TestModels
import TestServer
import Testing

/// The README's model quick start, compiled and run against the reference server (Rails
/// conventions) and against a Django REST framework app (`.djangoREST`). It uses the default store,
/// as the README does, so the runs are serialized and no other test uses that store.
@Suite("README model quick start", .serialized, .timeLimit(.minutes(5)))
struct ModelQuickStartTests {
    static let readme = repositoryRoot.appendingPathComponent("README.md")

    @Test("runs against the reference server")
    func reference() async throws {
        let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
        defer { Task { await server.stop() } }
        MonoRail.configure { $0 = MonoRail.Configuration(retryPolicy: .none) }
        let output = try await quickStart(apiRootURL: server.baseURL)
        try #require(output.count >= 4)
        #expect(output[0] == "true")
        #expect(output[1] == "can't be blank")
        #expect(output.contains("MonoRail Co."))
        #expect(output.last == "deleted")
        #expect(server.journal.entries.filter { $0.hasPrefix("PUT /trains/") }.count == 1)
        // The two storage lines at work: with the server gone, the list still answers, from the file.
        await server.stop()
        let offline = try await QuickStart.Train.response()
        #expect(offline.source == .cache)
        #expect(offline.value.map(\.company).contains("MonoRail Co."))
        #expect(!offline.value.contains { $0.isDeleted })
    }

    @Test("the seed's Networking.delegate signs every request of the default store and hears every response")
    func networkingDelegate() async throws {
        let server = try await ReferenceServer(
            schema: .trains, configuration: .init(port: 0, bearerToken: "s3cret")
        ).start()
        defer { Task { await server.stop() } }
        MonoRail.configure { $0 = MonoRail.Configuration.testing(server.baseURL) }
        let unsigned = try await #require(throws: APIError.self) { try await QuickStart.Train.get(id: 1) }
        #expect(unsigned.statusCode == 401)

        let session = Session(token: "s3cret")
        Networking.delegate = session
        #expect(Networking.delegate is Session)
        #expect(MonoRail.configuration.networkingDelegate is Session)
        let train = try await QuickStart.Train.get(id: 1)
        #expect(train.id == .int(1))
        #expect(server.journal.entries.last == "GET /trains/1?locale=en")
        #expect(session.etags.withLock { $0.count } == 1)

        Networking.delegate = nil
        #expect(Networking.delegate == nil)
        let again = try await #require(throws: APIError.self) { try await QuickStart.Train.get(id: 1) }
        #expect(again.statusCode == 401)
        #expect(session.etags.withLock { $0.count } == 1)
    }

    @Test("middleware installed with MonoRail.configure runs for every model of the default store")
    func middlewareThroughConfigure() async throws {
        let server = try await ReferenceServer(
            schema: .trains, configuration: .init(port: 0, bearerToken: "m1ddleware")
        ).start()
        defer { Task { await server.stop() } }
        let seen = Locked<[String]>([])
        MonoRail.configure {
            $0 = MonoRail.Configuration.testing(server.baseURL)
            $0.middleware = [
                .headers([.authorization: "Bearer m1ddleware"]),
                .observeResponses { response in seen.withLock { $0.append("\(response.status.code)") } },
            ]
        }
        let train = try await QuickStart.Train.get(id: 1)
        #expect(train.company == "MonoRail Co.")
        let cars = try await Seed.Car.get(where: ["train_id": 1])
        #expect(cars.count == 2)
        #expect(seen.withLock { $0 } == ["200", "200"])
        MonoRail.configure { $0.middleware = [] }
        let refused = try await #require(throws: APIError.self) { try await QuickStart.Train.get(id: 2) }
        #expect(refused.statusCode == 401)
    }

    /// The seed's delegate: a session token on every request, a locale parameter, and each
    /// response's ETag heard.
    final class Session: NetworkingDelegate {
        let token: String
        let etags = Locked<[String]>([])

        init(token: String) { self.token = token }

        func additionalHeaders() -> HTTPFields { [.authorization: "Bearer \(token)"] }
        func additionalParameters() -> [String: JSONValue] { ["locale": "en"] }
        func newResponse(headers: HTTPFields) {
            if let etag = headers[.eTag] { etags.withLock { $0.append(etag) } }
        }
    }

    @Test("runs against Django REST framework with the .djangoREST preset")
    func django() async throws {
        let server = try await PythonServer.django()
        defer { server.stop() }
        MonoRail.configure { $0 = MonoRail.Configuration(conventions: .djangoREST, retryPolicy: .none) }
        let output = try await quickStart(apiRootURL: server.baseURL)
        try #require(output.count >= 4)
        #expect(output[0] == "true")
        #expect(output[1] == "This field is required.")
        #expect(output.contains("MonoRail Co."))
        #expect(output.last == "deleted")
    }

    @Test("runs against djangorestframework-jsonapi with the .jsonAPI preset")
    func jsonAPI() async throws {
        let server = try await PythonServer.jsonAPI()
        defer { server.stop() }
        MonoRail.configure { $0 = MonoRail.Configuration(conventions: .jsonAPI, retryPolicy: .none) }
        let output = try await quickStart(apiRootURL: server.baseURL)
        try #require(output.count >= 4)
        #expect(output[0] == "true")
        #expect(output[1] == "This field is required.")
        #expect(output.contains("MonoRail Co."))
        #expect(output.last == "deleted")
    }

    @Test("the SPEC.md §2 example runs against the reference server")
    func specExample() async throws {
        let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
        defer { Task { await server.stop() } }
        MonoRail.configure { $0 = MonoRail.Configuration(retryPolicy: .none) }
        typealias Train = Spec.Train
        typealias Car = Spec.Car

        MonoRail.register(apiRootURL: server.baseURL)

        let train = try await Train.get(id: 1)  // GET  /trains/1
        let trains = try await Train.get()  // GET  /trains
        let fast = try await Train.get(where: ["company": "MonoRail Co."])  // GET /trains?company=…
        let cars = try await Car.get(where: ["train_id": 1])  // values: strings, numbers, bools, arrays
        let t = Train()
        t.company = "MonoRail Co."
        try await t.create()  // POST /trains   {"train": {…}}
        t.maxSpeed = 46.8
        try await t.save()  // PUT  /trains/:id (create() if new)
        try await t.fetch()  // GET  /trains/:id, refresh in place
        try await t.delete()  // DELETE /trains/:id
        let found = try await Train.search("Mono")  // Objects' search verb (route configurable)

        // the same with callbacks, as in the seed
        let viaCallback: Train = try await withCheckedThrowingContinuation { continuation in
            Train.get(
                id: 1, success: { train in continuation.resume(returning: train) },
                failure: { error in continuation.resume(throwing: error) })
        }

        #expect(train.company == "MonoRail Co.")
        #expect(train.cars.map(\.occupancy) == [40, 12])
        #expect(train.conductor?.name == "Bill")
        #expect(cars.allSatisfy { $0.train === train })
        #expect(cars.map(ObjectIdentifier.init) == train.cars.map(ObjectIdentifier.init))
        #expect(trains.first === train && fast.first === train && viaCallback === train)
        #expect(found.map(\.company) == ["MonoRail Co."])
        #expect(t.isDeleted)
        #expect(
            server.journal.entries.filter { !$0.hasPrefix("GET /trains/1") } == [
                "GET /trains", "GET /trains?company=MonoRail%20Co.", "GET /cars?train_id=1", "POST /trains",
                "PUT /trains/3", "GET /trains/3", "DELETE /trains/3", "GET /trains?q=Mono",
            ])
    }

    @Test("matches the README")
    func matchesReadme() throws {
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        let block = try #require(blocks.first { $0.hasPrefix("import MonoRail\nimport MonoRailSQLite") })
        let normalise: (String) -> [String] = { text in
            text.split(separator: "\n")
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
                .filter {
                    !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("import ") && !$0.contains("apiRootURL:")
                }
                .map { $0.replacingOccurrences(of: "print(", with: "record(") }
                .map { $0.replacingOccurrences(of: "QuickStart.", with: "") }
                // A folder of the test's own stands in for the user's caches folder.
                .map { $0.replacingOccurrences(of: "URL.cachesDirectory", with: "cachesDirectory") }
        }
        let models = source.components(separatedBy: "// README MODEL BEGIN\n")[1]
            .components(separatedBy: "// README MODEL END")[0]
        let body = source.components(separatedBy: "// README BEGIN\n")[1].components(separatedBy: "// README END")[0]
        #expect(normalise(models + body) == normalise(block))
    }

    func quickStart(apiRootURL: URL) async throws -> [String] {
        var output: [String] = []
        func record(_ item: Any) { output.append("\(item)") }
        let cachesDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "quick-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cachesDirectory) }
        // README BEGIN
        MonoRail.register(apiRootURL: apiRootURL)

        // Offline too: records kept in SQLite across launches, and reads that fall back to them.
        let storage = try SQLiteStorage(path: cachesDirectory.appendingPathComponent("trains.sqlite").path)
        // swift-format-ignore
        MonoRail.configure { $0.storage = storage; $0.cachePolicy = .networkFirst }

        let train = QuickStart.Train()
        train.company = "MonoRail Co."
        train.numberOfCars = 5
        try await train.create()  // POST /trains  {"train": {"company": "MonoRail Co.", …}}

        let sameTrain = try await QuickStart.Train.get(id: train.id ?? 0)  // GET /trains/:id
        record(sameTrain === train)  // true: one live instance per record

        train.maxSpeed = 46.8
        try await train.save()  // PUT /trains/:id

        do {
            try await QuickStart.Train().create()  // no company
        } catch let error as APIError where error.code == .validationFailed {
            record(error.errors["company"].first ?? "")  // can't be blank
        }

        for aTrain in try await QuickStart.Train.get() {  // GET /trains
            record(aTrain.company ?? "")
        }

        try await train.delete()  // DELETE /trains/:id
        record(train.isDeleted ? "deleted" : "still there")
        // README END
        return output
    }
}

/// The README's model, in a namespace of its own.
enum QuickStart {
    // README MODEL BEGIN
    @Resource
    final class Train {
        var company: String?
        var numberOfCars: Int?
        var maxSpeed: Double?
    }
    // README MODEL END
}
