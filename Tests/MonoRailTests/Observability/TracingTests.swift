import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing
import Tracing

/// Spans and measurements of model actions against the reference server, read back from the
/// in-memory tracer and the metrics test kit.
@Suite("Tracing and metrics of model actions", .timeLimit(.minutes(5)))
struct TracingTests {
    @Test("a get is a Train.get span with one client span per attempt, named by the route, its context sent")
    func get() async throws {
        let tracer = InMemoryTracer()
        try await withTracing(tracer) { api in
            _ = try await Train.get(id: 1, in: api.store)
            let spans = tracer.finishedSpans
            let action = try #require(spans.first { $0.operationName == "Train.get" })
            let attempt = try #require(spans.first { $0.operationName == "GET /trains/{id}" })
            #expect(action.parentSpanID == nil)
            #expect(action.kind == .internal)
            #expect(action.attributes.get("monorail.model") == .string("Train"))
            #expect(action.attributes.get("monorail.action") == .string("get"))
            #expect(action.attributes.get("monorail.record.id") == .string("1"))
            #expect(action.attributes.get("monorail.response.source") == .string("network"))
            #expect(action.events.map(\.name).contains("merged"))
            #expect(action.events.map(\.name).contains("announced"))

            #expect(attempt.parentSpanID == action.spanID)
            #expect(attempt.traceID == action.traceID)
            #expect(attempt.kind == .client)
            #expect(attempt.attributes.get("http.request.method") == .string("GET"))
            #expect(attempt.attributes.get("http.response.status_code") == .int64(200))
            #expect(attempt.attributes.get("url.template") == .string("/trains/{id}"))
            #expect(attempt.attributes.get("url.full") == .string("\(api.baseURL.absoluteString)/trains/1"))
            #expect(attempt.attributes.get("server.address") == .string("127.0.0.1"))
            #expect(attempt.attributes.get("server.port") == .int64(Int64(api.server.port)))
            #expect(attempt.attributes.get("http.request.resend_count") == nil)
            #expect(attempt.attributes.get("error.type") == nil)
            #expect(spans.count == 2)

            // The attempt's context went out with the request, in the fields the tracer writes.
            let injected = try #require(tracer.performedContextInjections.last)
            #expect(injected.values[InMemoryTracer.spanIDKey] == attempt.spanID)
            #expect(injected.values[InMemoryTracer.traceIDKey] == attempt.traceID)
        }
    }

    @Test("a save the server first answers 503 has two attempt spans, the second with resend count 1")
    func saveWithRetry() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let server = ReferenceServer.Configuration(faults: FaultInjection(failFirst: 1))
        try await withTracing(tracer, metrics: metrics, server: server) { api in
            // The store's instance of train 1, made from what the app knows: the save is the
            // server's first request, the one it answers 503.
            let train = try Train.merge(json: ["id": 1, "company": "MonoRail Co."], in: api.store)
            train.company = "Retried Rail"
            try await train.save()

            let spans = tracer.finishedSpans
            let save = try #require(spans.first { $0.operationName == "Train.save" })
            var attempts: [FinishedInMemorySpan] = []
            for span in spans where span.kind == .client { attempts.append(span) }
            #expect(attempts.map(\.operationName) == ["PUT /trains/{id}", "PUT /trains/{id}"])
            #expect(attempts.allSatisfy { $0.parentSpanID == save.spanID })
            let first = try #require(attempts.first { $0.attributes.get("http.response.status_code") == .int64(503) })
            let second = try #require(attempts.first { $0.attributes.get("http.response.status_code") == .int64(200) })
            #expect(first.attributes.get("error.type") == .string("503"))
            #expect(first.status?.code == .error)
            #expect(first.attributes.get("http.request.resend_count") == nil)
            #expect(second.attributes.get("http.request.resend_count") == .int64(1))
            #expect(second.attributes.get("error.type") == nil)
            #expect(save.attributes.get("monorail.action") == .string("save"))
            #expect(save.status?.code != .error)

            let durations = metrics.timers(label: "http.client.request.duration")
            let refused = durations.filter { timer in
                timer.dimensions.contains { $0 == ("http.response.status_code", "503") }
                    && timer.dimensions.contains { $0 == ("http.request.method", "PUT") }
            }
            #expect(refused.count == 1)
            #expect(refused.first?.dimensions.contains { $0 == ("error.type", "503") } == true)
            #expect(refused.first?.dimensions.contains { $0 == ("url.template", "/trains/{id}") } == true)
            #expect(refused.first?.values.count == 1)
        }
    }

    @Test("a cached answer is a Train.get span with a cache event and no request, counted by policy and source")
    func cachedAnswer() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await withTracing(tracer, metrics: metrics) { api in
            _ = try await Train.get(id: 1, in: api.store)
            tracer.clearFinishedSpans()
            _ = try await Train.get(id: 1, policy: .cacheFirst, in: api.store)
            let spans = tracer.finishedSpans
            #expect(spans.map(\.operationName) == ["Train.get"])
            let action = try #require(spans.first)
            #expect(action.attributes.get("monorail.response.source") == .string("cache"))
            #expect(action.attributes.get("monorail.cache.policy") == .string("cacheFirst"))
            #expect(action.events.map(\.name).contains("cache.answered"))
            #expect(
                try metrics.expectCounter(
                    "monorail.cache.answers",
                    [("monorail.model", "Train"), ("policy", "cacheFirst"), ("source", "cache")]
                ).totalValue == 1)
            #expect(
                try metrics.expectCounter(
                    "monorail.cache.answers",
                    [("monorail.model", "Train"), ("policy", "networkOnly"), ("source", "network")]
                ).totalValue == 1)
        }
    }

    @Test("no token, cookie or secret query value reaches an attribute")
    func noSecrets() async throws {
        let tracer = InMemoryTracer()
        try await withTracing(tracer) { api in
            _ = try await Train.get(where: ["api_key": "s3cr3t-key"], in: api.store)
        } configure: {
            $0.defaultHeaders[.authorization] = "Bearer s3cr3t-token"
            $0.defaultHeaders[.cookie] = "session=s3cr3t-cookie"
        }
        let spans = tracer.finishedSpans
        #expect(spans.map(\.operationName).sorted() == ["GET /trains", "Train.list"])
        var values: [String] = []
        for span in spans {
            // SpanAttributes is no Sequence: forEach is its only walk.
            // swift-format-ignore: ReplaceForEachWithForLoop
            span.attributes.forEach { _, value in values.append("\(value)") }
            values += span.events.flatMap { event in
                var texts: [String] = []
                // swift-format-ignore: ReplaceForEachWithForLoop
                event.attributes.forEach { _, value in texts.append("\(value)") }
                return texts
            }
        }
        #expect(!values.isEmpty)
        #expect(values.allSatisfy { !$0.contains("s3cr3t") })
        let attempt = try #require(spans.first { $0.operationName == "GET /trains" })
        #expect(try #require(spanURL(attempt)).hasSuffix("/trains?api_key=[REDACTED]"))
    }

    @Test("an answer that cannot be read counts as a decode failure and fails the action's span")
    func decodeFailure() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await withTracing(tracer, metrics: metrics) { api in
            await #expect(throws: APIError.self) { _ = try await MistypedTrain.get(id: 1, in: api.store) }
            let action = try #require(tracer.finishedSpans.first { $0.operationName == "MistypedTrain.get" })
            #expect(action.status?.code == .error)
            #expect(action.attributes.get("error.type") == .string("decodingFailed"))
            #expect(
                try metrics.expectCounter(
                    "monorail.decode.failures", [("monorail.model", "MistypedTrain"), ("error.type", "decodingFailed")]
                ).totalValue == 1)
        }
    }

    @Test("a relationship's load and a query's next page are spans of their own, over the actions they run")
    func relationshipAndPaging() async throws {
        let tracer = InMemoryTracer()
        try await withTracing(tracer, server: ReferenceServer.Configuration(defaultPageSize: 1)) { api in
            try await Self.loadCars(api, tracer: tracer)
            tracer.clearFinishedSpans()
            try await Self.pageCars(api, tracer: tracer)
        }
    }

    private static func loadCars(_ api: TestAPI, tracer: InMemoryTracer) async throws {
        let train = try await Seed.Train.get(id: 1, in: api.store)
        tracer.clearFinishedSpans()
        try await train.$cars.load()
        let spans = tracer.finishedSpans
        let load = try #require(spans.first { $0.operationName == "Train.cars.load" })
        let pages = spans.filter { $0.parentSpanID == load.spanID }
        #expect(pages.count >= 2)
        #expect(pages.allSatisfy { $0.operationName.hasPrefix("Car.") })
    }

    private static func pageCars(_ api: TestAPI, tracer: InMemoryTracer) async throws {
        let query = try await Seed.Car.query(pageSize: 1, in: api.store)
        try await query.loadNextPage()
        let spans = tracer.finishedSpans
        let next = try #require(spans.first { $0.operationName == "Car.query.loadNextPage" })
        let page = try #require(spans.first { $0.parentSpanID == next.spanID })
        #expect(spans.contains { $0.parentSpanID == page.spanID && $0.kind == .client })
        #expect(spans.contains { $0.operationName == "Car.query.refresh" })
    }

    @Test("one trace runs from the app's action through the server's request to its SQL")
    func serverJoinsTheTrace() async throws {
        let tracer = InMemoryTracer()
        let serverMetrics = TestMetrics()
        var server = ReferenceServer.Configuration()
        server.tracer = tracer
        server.metricsFactory = serverMetrics
        try await withTracing(tracer, server: server) { api in
            _ = try await Train.get(id: 1, in: api.store)
            // The server's span ends once its response is written, a moment after the client has it.
            #expect(try await eventually { tracer.finishedSpans.contains { $0.kind == .server } })
            let spans = tracer.finishedSpans
            let action = try #require(spans.first { $0.operationName == "Train.get" })
            var attempts: [FinishedInMemorySpan] = []
            var handled: [FinishedInMemorySpan] = []
            var statements: [FinishedInMemorySpan] = []
            for span in spans {
                if span.operationName == "GET /trains/{id}" { attempts.append(span) }
                if span.kind == .server { handled.append(span) }
                if span.attributes.get("db.system.name") != nil { statements.append(span) }
            }
            let attempt = try #require(attempts.first)
            let request = try #require(handled.first)
            #expect(request.traceID == action.traceID)
            #expect(request.parentSpanID == attempt.spanID)
            // The reference server routes every resource by one pattern.
            #expect(request.attributes.get("http.route") == .string("/{resource}/{id}"))
            #expect(request.attributes.get("http.response.status_code") == .int64(200))
            let select = try #require(statements.first { $0.operationName == "SELECT trains" })
            #expect(select.parentSpanID == request.spanID)
            #expect(select.traceID == action.traceID)
            #expect(select.attributes.get("db.system.name") == .string("sqlite"))
            #expect(select.attributes.get("db.collection.name") == .string("trains"))
            #expect(statements.allSatisfy { $0.parentSpanID == request.spanID })
            #expect(!serverMetrics.timers.isEmpty)
        }
    }

    @Test("nested routes name their spans with their placeholders: a relationship's own route, a nested model's")
    func nestedRoutes() async throws {
        let tracer = InMemoryTracer()
        try await withTracing(tracer) { api in
            let train = try await Nested.Train.get(id: 1, in: api.store)
            try await train.$cars.load()
            _ = try await Nested.Car.get(id: 1, parameters: ["train_id": 1], in: api.store)
            var clientSpans: [String] = []
            for span in tracer.finishedSpans where span.kind == .client { clientSpans.append(span.operationName) }
            #expect(clientSpans.contains("GET /trains/{id}/cars"))
            #expect(clientSpans.contains("GET /trains/{train_id}/cars/{id}"))
            #expect(!clientSpans.contains("GET"))
        }
    }

    @Test(
        "a pushed change is a LiveUpdates.apply span of its own trace, with the change as an event, and its lag measured"
    )
    func pushedChange() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await withTracing(tracer, metrics: metrics) { api in
            let train = try await Train.get(id: 1, in: api.store)
            try await api.store.liveUpdates.connect()
            defer { api.store.liveUpdates.disconnect() }
            let other = ResourceStore(configuration: .testing(api.server.baseURL))
            let theirs = try await Train.get(id: 1, in: other)
            theirs.company = "Pushed Co."
            try await theirs.save()
            #expect(try await eventually { train.company == "Pushed Co." })
            #expect(try await eventually { tracer.finishedSpans.contains { $0.operationName == "LiveUpdates.apply" } })
            let apply = try #require(tracer.finishedSpans.first { $0.operationName == "LiveUpdates.apply" })
            #expect(apply.parentSpanID == nil)
            let pushed = try #require(apply.events.first { $0.name == "pushed" })
            #expect(pushed.attributes.get("monorail.model") == .string("train"))
            #expect(pushed.attributes.get("monorail.live.kind") == .string("updated"))
            #expect(pushed.attributes.get("monorail.record.ids") == .stringArray(["1"]))
            #expect(try await eventually { (try? metrics.expectTimer("monorail.live.lag").values.count) == 1 })
        } configure: {
            $0.liveUpdates = .serverSentEvents(path: "/changes")
        }
    }

    /// A reference server serving the trains, and a store tracing into `tracer` and measuring
    /// into `metrics`, retrying as the default policy does, without its wait.
    private func withTracing(
        _ tracer: InMemoryTracer, metrics: TestMetrics? = nil,
        server: ReferenceServer.Configuration = .init(),
        _ body: (TestAPI) async throws -> Void,
        configure: (inout MonoRail.Configuration) -> Void = { _ in }
    ) async throws {
        try await withReferenceServer(schema: .trains, configuration: server) {
            $0.transport = transportUnderTest
            $0.tracer = tracer
            $0.metricsFactory = metrics
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5))
            configure(&$0)
        } _: { api in
            try await body(api)
        }
    }

    private func spanURL(_ span: FinishedInMemorySpan) -> String? {
        guard case .string(let url)? = span.attributes.get("url.full") else { return nil }
        return url
    }
}

/// The trains' records read with `company` as a number: every answer fails to decode.
@Resource(name: "train")
final class MistypedTrain {
    var company: Int?
}
