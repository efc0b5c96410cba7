import Foundation
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@testable import MonoRail

/// Counts the requests that pass through it.
private final class CountingMiddleware: Middleware {
    let count = Locked(0)

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata, next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        count.withLock { $0 += 1 }
        return try await next(request, body, metadata)
    }
}

private let countingMiddleware = CountingMiddleware()

/// Reads `/trains` through a middleware of its own: a client setting, so it gets its own client.
@Resource(name: "train")
final class CountedTrain {
    var company: String?

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.middleware.append(countingMiddleware)
    }
}

@Suite("One APIClient per store configuration", .timeLimit(.minutes(5)))
struct StoreClientTests {
    @Test("models that change no client setting share the store's client")
    func shared() throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let client = store.client
        #expect(store.client === client)
        #expect(store.setup(for: Train.self).client === client)
        #expect(store.setup(for: Car.self).client === client)
        // Coding, format and conventions go with each request: still the store's client.
        #expect(store.setup(for: LenientTrain.self).client === client)
        #expect(store.setup(for: PackedTrain.self).client === client)
        #expect(store.setup(for: Post.self).client === client)
        #expect(store.setup(for: CountedTrain.self).client !== client)
        store.configure { $0.timeout = .seconds(5) }
        #expect(store.client !== client)
        #expect(store.setup(for: Train.self).client === store.client)
    }

    @Test("the model's client keeps the store's clock and settings it did not change")
    func keepsClock() throws {
        struct StepClock: Clock {
            var now: ContinuousClock.Instant { ContinuousClock().now }
            var minimumResolution: Duration { .zero }
            func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {}
        }
        var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"), timeout: .seconds(7))
        configuration.clock = StepClock()
        let store = ResourceStore(configuration: configuration)
        let own = store.setup(for: CountedTrain.self).client.configuration
        #expect(own.clock is StepClock)
        #expect(own.timeout == .seconds(7))
        #expect(own.middleware.count == 1)
    }

    @Test("a shared client still sends each model's format, and a model's own middleware runs for it alone")
    func perModelSettings() async throws {
        try await withHarness { harness in
            _ = try await PackedTrain.get(in: harness.store)
            _ = try await Train.get(in: harness.store)
            let accepts = harness.journal.requests.map { $0.accept ?? "" }
            #expect(accepts.count == 2)
            #expect(accepts.first?.hasPrefix("application/x-msgpack") == true, "\(accepts)")
            #expect(accepts.last == "application/json")
            let before = countingMiddleware.count.withLock { $0 }
            _ = try await CountedTrain.get(in: harness.store)
            _ = try await Train.get(in: harness.store)
            #expect(countingMiddleware.count.withLock { $0 } == before + 1)
        }
    }

    @Test("with no API root, sending is a clear error and merging a body received otherwise works")
    func noAPIRoot() async throws {
        let store = ResourceStore()
        let error = try await #require(throws: APIError.self) { try await Train.get(id: 1, in: store) }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("MonoRail.register(apiRootURL:)"))
        let train = try Train.merge(recordBody: Data(#"{"train": {"id": 1, "company": "DB"}}"#.utf8), in: store)
        #expect(train.company == "DB")
        #expect(store.instance(of: Train.self, id: 1) === train)
    }

    @Test("concurrent configure calls all take effect")
    func concurrentConfigure() async throws {
        let store = ResourceStore()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                guard let name = HTTPField.Name("X-\(index)") else { continue }
                group.addTask { store.configure { $0.defaultHeaders[name] = "\(index)" } }
            }
        }
        #expect(store.configuration.defaultHeaders.count == 50)
    }
}
