import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import Testing

/// `.networkFirst` on a dead network answers from the cache in seconds: a refused or unroutable
/// connection at once, with no retries; a black-holed one at the offline deadline, the request going
/// on in the background. A read the cache cannot answer still retries.
@Suite("Offline in seconds", .timeLimit(.minutes(5)))
struct OfflineDeadlineTests {
    /// Counts the retries' waits and ends each at once; a wait of about an hour — the offline
    /// deadline these tests set when it is not what they are about — lasts until it is cancelled.
    final class RetryClock: Clock, Sendable {
        private let waits = Locked(0)
        var now: ContinuousClock.Instant { ContinuousClock().now }
        var minimumResolution: Duration { .zero }
        var retries: Int { waits.withLock { $0 } }

        func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
            guard now.duration(to: deadline) < .seconds(1800) else {
                try await Task.sleep(for: .seconds(86_400))
                return
            }
            waits.withLock { $0 += 1 }
        }
    }

    /// A store on `host` (the harness's server port) whose record cache is `cache`, retrying as a
    /// real app would.
    static func store(
        host: String, port: Int, cache: InMemoryRecordCache, clock: any Clock<Duration> = ContinuousClock(),
        deadline: Duration
    ) -> ResourceStore {
        var configuration = MonoRail.Configuration(
            apiRootURL: URL(string: "http://\(host):\(port)/"), retryPolicy: .default)
        configuration.storage = cache
        configuration.clock = clock
        configuration.offlineDeadline = deadline
        configuration.timeout = .seconds(60)
        return ResourceStore(configuration: configuration)
    }

    /// Reads train 1 from the harness's server into a new cache.
    static func warmCache(_ harness: TestAPI) async throws -> InMemoryRecordCache {
        let cache = InMemoryRecordCache()
        var configuration = harness.store.configuration
        configuration.storage = cache
        _ = try await Train.get(id: 1, in: ResourceStore(configuration: configuration))
        return cache
    }

    @Test("a refused connection answers from the cache at once, with no retry; isOffline says so")
    func refused() async throws {
        try await withHarness { harness in
            let cache = try await Self.warmCache(harness)
            let port = harness.server.baseURL.port ?? 0
            await harness.server.stop()
            let clock = RetryClock()
            let store = Self.store(host: "127.0.0.1", port: port, cache: cache, clock: clock, deadline: .seconds(3600))
            #expect(store.isOffline == false)
            let told = Locked(false)
            withObservationTracking {
                _ = store.isOffline
            } onChange: {
                told.withLock { $0 = true }
            }
            let answer = try await Train.response(id: 1, policy: .networkFirst, in: store)
            #expect(answer.source == .cache)
            #expect(answer.value.company == "MonoRail Co.")
            #expect(answer.revalidation == nil)
            #expect(clock.retries == 0)
            #expect(store.isOffline)
            #expect(told.withLock { $0 })

            // With nothing cached, the retry cycle is the read's: it waits between attempts, then throws.
            let error = try await #require(throws: APIError.self) {
                try await Train.get(id: 2, policy: .networkFirst, in: store)
            }
            #expect(error.code == .cannotConnect)
            #expect(clock.retries == RetryPolicy.default.maxAttempts - 1)
        }
    }

    @Test("an answer of the server, whatever its status, clears isOffline")
    func backOnline() async throws {
        try await withHarness { harness in
            let cache = try await Self.warmCache(harness)
            // Nothing listens on port 1: refused.
            let store = Self.store(host: "127.0.0.1", port: 1, cache: cache, deadline: .seconds(3))
            _ = try await Train.get(id: 1, policy: .networkFirst, in: store)
            #expect(store.isOffline)
            store.configure { $0.apiRootURL = harness.server.baseURL }
            let error = try await #require(throws: APIError.self) {
                try await Train.get(id: 404, policy: .networkOnly, in: store)
            }
            #expect(error.statusCode == 404)
            #expect(store.isOffline == false)
        }
    }

    @Test("an address with no route answers from the cache at once")
    func unreachable() async throws {
        if let reason = NetworkFaults.unavailable { try Test.cancel("no unroutable address here: \(reason)") }
        try await withHarness { harness in
            let cache = try await Self.warmCache(harness)
            let clock = RetryClock()
            let store = Self.store(
                host: NetworkFaults.unreachable, port: harness.server.baseURL.port ?? 0, cache: cache, clock: clock,
                deadline: .seconds(3600))
            let answer = try await Train.response(id: 1, policy: .networkFirst, in: store)
            #expect(answer.source == .cache)
            #expect(answer.revalidation == nil)
            #expect(clock.retries == 0)
            #expect(store.isOffline)
        }
    }

    @Test("a black-holed address answers from the cache at the offline deadline; the request goes on behind it")
    func blackHole() async throws {
        if let reason = NetworkFaults.unavailable { try Test.cancel("no black hole here: \(reason)") }
        try await withHarness { harness in
            let cache = try await Self.warmCache(harness)
            // A request timeout of 60 s and three attempts: the old fallback took three minutes,
            // past this suite's time limit.
            let store = Self.store(
                host: NetworkFaults.blackHole, port: harness.server.baseURL.port ?? 0, cache: cache,
                deadline: .seconds(1))
            let answer = try await Train.response(id: 1, policy: .networkFirst, in: store)
            #expect(answer.source == .cache)
            #expect(answer.value.company == "MonoRail Co.")
            #expect(store.isOffline)
            // The request still runs, so an answer that comes late merges; cancelled, it ends.
            let revalidation = try #require(answer.revalidation)
            revalidation.cancel()
            let error = await #expect(throws: APIError.self) { try await revalidation.value }
            #expect(error?.code == .cancelled)
            #expect(answer.value.company == "MonoRail Co.")
        }
    }

    @Test("a black hole's late answer is the revalidation's: a slow server's answer merges after the cache's")
    func lateAnswerMerges() async throws {
        try await withHarness(server: .init(faults: FaultInjection(latency: .milliseconds(1500)))) { harness in
            let cache = InMemoryRecordCache()
            var patient = harness.store.configuration
            patient.storage = cache
            _ = try await Train.get(id: 1, in: ResourceStore(configuration: patient))
            let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
            _ = try harness.server.store.update(trains, id: "1", attributes: ["company": "Changed"])
            let store = Self.store(
                host: "127.0.0.1", port: harness.server.baseURL.port ?? 0, cache: cache,
                deadline: .milliseconds(200))
            let answer = try await Train.response(id: 1, policy: .networkFirst, in: store)
            #expect(answer.source == .cache)
            #expect(answer.value.company == "MonoRail Co.")
            #expect(store.isOffline)
            try await #require(answer.revalidation).value
            #expect(answer.value.company == "Changed")
            #expect(store.isOffline == false)
        }
    }
}
