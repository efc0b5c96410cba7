import Foundation
import InMemoryTracing
import MetricsTestKit
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing
import Tracing

extension RestartTests {
    @Test("a write kept by a save is replayed by a new process in a span linked to that save, and measured")
    func replayLinkedToItsSave() async throws {
        try await Self.withServerAndFile { harness, path in
            let storage = try SQLiteStorage(path: path)
            let online = ResourceStore(configuration: harness.store.configuration, storage: storage)
            _ = try await Spec.Train.get(id: 1, in: online)

            let tracer = InMemoryTracer(idGenerator: .unique)
            let metrics = TestMetrics()
            var offline = harness.store.configuration
            offline.apiRootURL = URL(string: "http://127.0.0.1:1")
            offline.writePolicy = .queuedWhenOffline
            offline.tracer = tracer
            offline.metricsFactory = metrics
            let store = ResourceStore(configuration: offline, storage: storage)
            let train = try await Spec.Train.get(id: 1, policy: .cacheOnly, in: store)
            train.company = "Traced Co."
            try await train.save()
            await store.outbox.pause()
            try await storage.flush()

            let save = try #require(tracer.finishedSpans.first { $0.operationName == "Train.save" })
            #expect(save.attributes.get("monorail.response.source") == .string("outbox"))
            #expect(try metrics.expectGauge("monorail.outbox.depth").lastValue == 1)
            #expect(try metrics.expectGauge("monorail.outbox.parked").lastValue == 0)
            #expect(try #require(try metrics.expectGauge("monorail.outbox.oldest_age").lastValue) >= 0)
            #expect(try storage.pendingWrites().first?.traceContext?[InMemoryTracer.spanIDKey] == save.spanID)

            let (status, output) = try await Self.launchAgain(
                "replaysLinkedToItsSave", file: path, api: harness.server.baseURL)
            #expect(status == 0, "\(output)")
            #expect(output.contains("replay linked to \(save.traceID)/\(save.spanID)"), "\(output)")
            #expect(output.contains("attempt PUT /trains/{id} 200 under the replay"), "\(output)")
            #expect(output.contains("depth 0"), "\(output)")
            let trains = try await Spec.Train.get(in: harness.store)
            #expect(trains.first { $0.id == 1 }?.company == "Traced Co.")
        }
    }

    /// The second launch of ``replayLinkedToItsSave()``.
    @Test(.enabled(if: secondLaunchFile != nil && secondLaunchAPI != nil))
    func replaysLinkedToItsSave() async throws {
        let path = try #require(Self.secondLaunchFile)
        let tracer = InMemoryTracer(idGenerator: .unique)
        let metrics = TestMetrics()
        var configuration = MonoRail.Configuration.testing(apiRootURL: Self.secondLaunchAPI)
        configuration.storage = try SQLiteStorage(path: path)
        configuration.tracer = tracer
        configuration.metricsFactory = metrics
        let store = ResourceStore(configuration: configuration)
        try await store.outbox.flush()

        let replay = try #require(tracer.finishedSpans.first { $0.operationName == "Outbox.replay" })
        #expect(replay.parentSpanID == nil)
        #expect(replay.attributes.get("monorail.outbox.outcome") == .string("confirmed"))
        #expect(replay.attributes.get("monorail.action") == .string("save"))
        let linked = try #require(replay.links.first?.context.inMemorySpanContext)
        print("replay linked to \(linked.traceID)/\(linked.spanID)")
        for attempt in tracer.finishedSpans where attempt.kind == .client && attempt.parentSpanID == replay.spanID {
            let status: String =
                if case .int64(let code)? = attempt.attributes.get("http.response.status_code") { "\(code)" } else {
                    "none"
                }
            print("attempt \(attempt.operationName) \(status) under the replay")
        }
        print("depth \(try metrics.expectGauge("monorail.outbox.depth").lastValue.map { Int($0) } ?? -1)")
    }
}

extension InMemoryTracer.IDGenerator {
    /// Ids no other process makes: the two launches' spans cannot be told apart by number.
    static var unique: Self {
        Self(nextTraceID: { UUID().uuidString }, nextSpanID: { UUID().uuidString })
    }
}
