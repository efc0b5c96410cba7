import BenchSupport
import Benchmark
import Foundation
import Hummingbird
import MonoRail
import NIOCore
import Observation

// Live from the server, two measures:
//
// 1. Push to observed: another client's `PATCH /trains/1` until an observer of the app's instance of
//    train 1 is told (the write, the server's log and stream, the parse and merge), against a plain
//    `Train.get(id: 1)` round trip by the same app, paired request by request. The reference server
//    runs in a process of its own: `swift build -c release --product RoundTripServer`.
// 2. Pushed changes merged per second: 10,000 `updated` events, served at once by an in-process
//    stream, merged into a store holding 1,000 trains and 100 live queries sorted by speed (each
//    takes the trains at least as fast as its own threshold), from connect to the last one merged;
//    against the same 10,000 records merged as one list body into a store with no query.

@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
}

let sharedServer = Result { try ServerProcess.start() }

/// Runs `start` (another client's write) and waits until `instance`'s company is next changed;
/// returns when the observer was told, which may be before the write's own answer has been read and
/// merged by the client that made it.
func told(_ instance: Train, after start: () async throws -> Void) async throws -> ContinuousClock.Instant {
    let (changed, continuation) = AsyncStream<ContinuousClock.Instant>.makeStream()
    withObservationTracking {
        _ = instance.company
    } onChange: {
        continuation.yield(ContinuousClock.now)
        continuation.finish()
    }
    try await start()
    for await instant in changed { return instant }
    throw CancellationError()
}

/// `count` updated events over trains 1 to 1,000, each a newer version than the one before.
func events(count: Int) -> String {
    let base = Date(timeIntervalSince1970: 1_800_000_000)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    var text = "retry: 1000\n"
    for index in 1...count {
        let id = (index - 1) % 1000 + 1
        let speed = Double((index * 7919) % 2400) / 10 + 80
        let version = formatter.string(from: base.addingTimeInterval(Double(index) / 1000))
        text +=
            "id: \(index)\nevent: updated\ndata: {\"train\": {\"id\": \(id), \"company\": \"Company \(index % 7)\", "
        text += "\"max_speed\": \(speed), \"updated_at\": \"\(version)\"}}\n\n"
    }
    return text
}

let benchmarks: @Sendable () -> Void = {
    let clock = ContinuousClock()

    Benchmark(
        "change feed: 2,000 writes through two nodes on PostgreSQL, each node's stream reading all, vs one node on SQLite",
        configuration: .init(
            metrics: [
                metric("PostgreSQL, two nodes: changes per second"), metric("SQLite, one node: changes per second"),
                metric("ratio PostgreSQL/SQLite (%)"),
            ],
            warmupIterations: 0, maxDuration: .seconds(300), maxIterations: 5)
    ) { benchmark in
        guard let url = ProcessInfo.processInfo.environment["MONORAIL_BENCH_POSTGRES_URL"] else {
            throw ServerError("set MONORAIL_BENCH_POSTGRES_URL to a database this benchmark may empty")
        }
        for _ in benchmark.scaledIterations {
            try recreate(postgres: url)
            let nodes = try (0..<2).map { _ in try ServerProcess.start(arguments: ["--database", url]) }
            let postgres = try await feedThroughput(nodes: nodes, writes: 2000)
            let sqlite = try await feedThroughput(nodes: [ServerProcess.start()], writes: 2000)
            benchmark.measurement(metric("PostgreSQL, two nodes: changes per second"), postgres)
            benchmark.measurement(metric("SQLite, one node: changes per second"), sqlite)
            benchmark.measurement(metric("ratio PostgreSQL/SQLite (%)"), postgres * 100 / max(1, sqlite))
        }
    }

    Benchmark(
        "push to observed vs GET round trip, server in another process, paired",
        configuration: .init(
            metrics: [
                metric("Train.get p50 (µs)"), metric("push to observed p50 (µs)"), metric("ratio push/get p50 (%)"),
                metric("their save alone p50 (µs)"),
            ],
            warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 10)
    ) { benchmark in
        let server = try sharedServer.get()
        var configuration = MonoRail.Configuration(apiRootURL: server.baseURL, retryPolicy: .none)
        configuration.liveUpdates = .serverSentEvents(path: "/changes")
        let app = ResourceStore(configuration: configuration)
        let other = ResourceStore(configuration: .init(apiRootURL: server.baseURL, retryPolicy: .none))
        let train = try await Train.get(id: 1, in: app)
        let theirs = try await Train.get(id: 1, in: other)
        try await app.liveUpdates.connect()
        var sequence = 0
        for _ in benchmark.scaledIterations {
            var gets: [Int] = []
            var pushes: [Int] = []
            var saves: [Int] = []
            for round in 0..<200 {
                for side in [0, 1, 2].shifted(by: round % 3) {
                    let start = clock.now
                    if side == 0 {
                        blackHole(try await Train.get(id: 1, in: app))
                        gets.append(microseconds(clock.now - start))
                    } else if side == 2 {
                        // The write alone, which the push includes: a train the app does not hold.
                        let other = try await Train.get(id: 2, in: other)
                        let saveStart = clock.now
                        other.maxSpeed = Double(round)
                        try await other.save()
                        saves.append(microseconds(clock.now - saveStart))
                    } else {
                        sequence += 1
                        theirs.company = "Company \(sequence)"
                        let observed = try await told(train) { try await theirs.save() }
                        pushes.append(microseconds(observed - start))
                    }
                }
            }
            benchmark.measurement(metric("Train.get p50 (µs)"), median(gets))
            benchmark.measurement(metric("push to observed p50 (µs)"), median(pushes))
            benchmark.measurement(metric("ratio push/get p50 (%)"), median(pushes) * 100 / max(1, median(gets)))
            benchmark.measurement(metric("their save alone p50 (µs)"), median(saves))
        }
        app.liveUpdates.disconnect()
    }

    Benchmark(
        "10,000 pushed changes into 1,000 trains and 100 live queries, vs one list body",
        configuration: .init(
            metrics: [
                metric("pushed changes per second"), metric("10,000 pushed (ms)"), metric("one list body (ms)"),
                metric("ratio pushed/list (%)"),
            ],
            warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 10)
    ) { benchmark in
        let stream = events(count: 10_000)
        let router = Router()
        // Live queries start empty: the pushed changes bring their records in.
        router.get("/trains") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"trains": []}"#)))
        }
        router.get("/changes") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: stream))
                    try await Task.sleep(for: .seconds(3600))
                })
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            })
        let serving = Task { try await application.runService(gracefulShutdownSignals: []) }
        defer { serving.cancel() }
        var port = 0
        for await first in ports { port = first }
        let list = Data(
            (#"{"trains": ["#
                + (1...10_000).map { index in
                    #"{"id": \#(index), "company": "Company \#(index % 7)", "max_speed": \#(Double((index * 7919) % 2400) / 10 + 80)}"#
                }.joined(separator: ",") + "]}").utf8)
        let seed = Data(
            (#"{"trains": ["# + (1...1000).map { #"{"id": \#($0), "max_speed": 80}"# }.joined(separator: ",") + "]}")
                .utf8)
        for _ in benchmark.scaledIterations {
            // The list body, into a store with the same 1,000 trains and no stream.
            let plain = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:\(port)")))
            let heldPlain = try Train.merge(listBody: seed, in: plain)
            let listStart = clock.now
            blackHole(try Train.merge(listBody: list, in: plain))
            let listTime = clock.now - listStart
            blackHole(heldPlain)

            var configuration = MonoRail.Configuration(
                apiRootURL: URL(string: "http://127.0.0.1:\(port)"), retryPolicy: .none)
            configuration.liveUpdates = .serverSentEvents(path: "/changes")
            let store = ResourceStore(configuration: configuration)
            let held = try Train.merge(listBody: seed, in: store)
            var queries: [ResourceQuery<Train>] = []
            for index in 0..<100 {
                queries.append(
                    try await Train.query(
                        where: ["max_speed": .atLeast(.double(Double(80 + index * 2)))],
                        order: [.descending("max_speed")],
                        in: store))
            }
            let start = clock.now
            try await store.liveUpdates.connect()
            while store.liveUpdates.lastEventID != "10000" { try await Task.sleep(for: .milliseconds(1)) }
            let pushed = clock.now - start
            store.liveUpdates.disconnect()
            blackHole((held, queries))
            benchmark.measurement(
                metric("pushed changes per second"), 10_000 * 1_000_000 / max(1, microseconds(pushed)))
            benchmark.measurement(metric("10,000 pushed (ms)"), microseconds(pushed) / 1000)
            benchmark.measurement(metric("one list body (ms)"), microseconds(listTime) / 1000)
            benchmark.measurement(
                metric("ratio pushed/list (%)"), microseconds(pushed) * 100 / max(1, microseconds(listTime)))
        }
    }
}
