import Foundation
import InMemoryTracing
import MetricsTestKit
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// The README's "Your server" recipes: each compiled here, and run against a server of its family.
@Suite("README recipes per server family", .timeLimit(.minutes(5)))
struct ReadmeRecipeTests {
    static let regions = [
        "RECIPE RAILS", "RECIPE DJANGO", "RECIPE FASTAPI", "RECIPE TOKENS", "RECIPE JSONAPI", "RECIPE JSONAPI GRAPH",
        "RECIPE TRACING",
    ]

    @Test("the recipes match the README")
    func matchReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeFormatTests.readmeBlocks()
        for region in Self.regions {
            let code = try #require(DocumentationBlocks.region(region, of: source), "no region \(region)")
            #expect(blocks.contains(code), "README block \(region) differs from the tested code")
        }
    }

    // Compiled, not run: they change the default store, which other suites own. The tests below run
    // the same settings on stores of their own.
    // swift-format-ignore: NeverForceUnwrap
    func rails() async throws {
        // README RECIPE RAILS BEGIN
        MonoRail.register(apiRootURL: URL(string: "https://api.example.com")!)  // Rails is the default
        let trains = try await Train.getAll()  // an index Kaminari or pagy pages: every page, by its links
        // README RECIPE RAILS END
        _ = trains
    }

    func django() {
        // README RECIPE DJANGO BEGIN
        MonoRail.configure { $0.conventions = .djangoREST }
        // README RECIPE DJANGO END
    }

    func fastAPI() {
        // README RECIPE FASTAPI BEGIN
        MonoRail.configure { $0.conventions = .fastAPI }
        // README RECIPE FASTAPI END
    }

    func jsonAPI() async throws {
        // README RECIPE JSONAPI BEGIN
        MonoRail.configure { $0.conventions = .jsonAPI }
        let train = try await Train.get(id: 1, include: ["cars"])  // GET /trains/1?include=cars
        // README RECIPE JSONAPI END
        _ = train
    }

    /// Run, on a store of its own, by `JSONAPIOutboxGraphTests`.
    func jsonAPIGraph() async throws {
        typealias Train = Served.Train
        typealias Car = Served.Car
        // README RECIPE JSONAPI GRAPH BEGIN
        MonoRail.configure {
            $0.conventions = .jsonAPI
            $0.writePolicy = .queued  // with a SQLiteStorage
        }
        let night = Train()
        night.company = "Night Rail"
        try await night.create()  // kept: night.id is a local id
        let sleeper = Car()
        sleeper.train = night
        try await sleeper.create()
        try await ResourceStore.default.outbox.flush()  // POST /operations: both, in one transaction
        print(sleeper.train === night, night.id?.isLocal == false)  // true true
        // README RECIPE JSONAPI GRAPH END
    }

    @Test("the tracing recipe runs: a get is a Train.get span over its request, and its duration is measured")
    func tracing() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await withHarness { harness in
            let apiRoot = harness.baseURL
            // README RECIPE TRACING BEGIN
            var configuration = MonoRail.Configuration(apiRootURL: apiRoot)
            configuration.tracer = tracer  // or InstrumentationSystem.bootstrap(…) once, for every store
            configuration.metricsFactory = metrics  // or MetricsSystem.bootstrap(…)
            let store = ResourceStore(configuration: configuration)
            let train = try await Train.get(id: 1, in: store)  // spans: Train.get → GET /trains/{id}
            // README RECIPE TRACING END
            #expect(train.id == 1)
            var names: [String] = []
            for span in tracer.finishedSpans { names.append(span.operationName) }
            #expect(names == ["GET /trains/{id}", "Train.get"])
            #expect(!metrics.timers(label: "http.client.request.duration").isEmpty)
        }
    }

    func tokens(session: some AccessTokenSource) {
        // README RECIPE TOKENS BEGIN
        MonoRail.configure { $0.middleware.append(.authentication(session)) }  // or $0.authentication = …
        // README RECIPE TOKENS END
    }

    @Test("Rails, paging by default: getAll() reads every page")
    func railsPaged() async throws {
        try await withHarness(server: .init(defaultPageSize: 2)) { harness in
            let third = Train()
            third.company = "Third"
            try await third.create(in: harness.store)
            #expect(try await Train.get(in: harness.store).count == 2)
            #expect(try await Train.getAll(in: harness.store).count == 3)
        }
    }

    @Test("bare JSON with the FastAPI preset: bodies sent bare, answers read bare, updates by PATCH with only changes")
    func bareJSON() async throws {
        try await withHarness(server: .init(envelope: .bare)) {
            $0.conventions = .fastAPI
        } _: { harness in
            let train = Train()
            train.company = "Bare Rail"
            train.numberOfCars = 4
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            train.maxSpeed = 88
            try await train.save()
            #expect(harness.journal.entries.suffix(2) == ["POST /trains", "PATCH /trains/\(id)"])
            #expect(try harness.server.store.find("trains", id: id.description)?["max_speed"] == 88)
            #expect(try harness.server.store.find("trains", id: id.description)?["number_of_cars"] == 4)
            let all = try await Train.get(in: harness.store)
            #expect(all.contains { $0 === train })
        }
    }
}
