import BenchPayload
import BenchSupport
import Benchmark
import Foundation
import MonoRail
import MonoRailAsyncHTTPClient

// Every budget is a ratio against a baseline measured in the same process. Baseline and MonoRail
// runs are interleaved inside each iteration (A, B, A, B, …), so machine drift — which on this 2-core
// host moved whole benchmarks by 25% between runs — hits both sides equally. Each iteration records
// both sides and their ratio as custom metrics:
// - decode: MonoRail's envelope + codec path vs raw JSONDecoder into the same structs (≤ 1.15×);
// - small GET p50: APIClient vs the raw transport, per transport (≤ 1.1×);
// - 32 concurrent clients: APIClient throughput vs the raw transport's (≥ 0.9×);
// - 100 concurrent identical GETs: the server counts exactly 1.

let benchmarks: @Sendable () -> Void = {
    overheadBenchmarks()
    let rawDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
    let monoRail = ResponseDecoder()
    let clock = ContinuousClock()

    // MARK: - Decoding 10,000 records

    let decodeMetrics = [metric("raw JSONDecoder (ms)"), metric("MonoRail (ms)"), metric("ratio MonoRail/raw (%)")]
    Benchmark(
        "decode 10k trains, paired",
        configuration: .init(
            metrics: decodeMetrics + [.mallocCountTotal], warmupIterations: 2, maxDuration: .seconds(30),
            maxIterations: 40)
    ) { benchmark in
        let data = Payload.trains
        for iteration in benchmark.scaledIterations {
            var raw = Duration.zero
            var ours = Duration.zero
            for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                let start = clock.now
                if side == 0 {
                    blackHole(try rawDecoder.decode(BenchTrainsRoot.self, from: data).trains.count)
                    raw = clock.now - start
                } else {
                    blackHole(try monoRail.decode([BenchTrain].self, from: data, roots: ["trains"]).value.count)
                    ours = clock.now - start
                }
            }
            benchmark.measurement(decodeMetrics[0], microseconds(raw) / 1000)
            benchmark.measurement(decodeMetrics[1], microseconds(ours) / 1000)
            benchmark.measurement(decodeMetrics[2], microseconds(ours) * 100 / max(1, microseconds(raw)))
        }
    }

    // MARK: - Small GETs and 32 concurrent clients, per transport

    let transports: [(String, any Transport)] = [
        ("AsyncHTTPClient", AsyncHTTPClientTransport()),
        ("URLSession", URLSessionTransport.shared),
    ]
    for (name, transport) in transports {
        let latencyMetrics = [
            metric("raw p50 (µs)"), metric("APIClient p50 (µs)"), metric("ratio APIClient/raw p50 (%)"),
        ]
        Benchmark(
            "small GET \(name), paired",
            configuration: .init(
                metrics: latencyMetrics, warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 20)
        ) { benchmark in
            let server = try await BenchServer.shared.value
            let request = HTTPRequest(
                method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/train")
            let client = APIClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: transport)
            for _ in benchmark.scaledIterations {
                var raw: [Int] = []
                var ours: [Int] = []
                for _ in 0..<200 {
                    var start = clock.now
                    let (_, body) = try await transport.send(request, body: nil, metadata: RequestMetadata())
                    blackHole(try rawDecoder.decode(BenchTrain.self, from: body))
                    raw.append(microseconds(clock.now - start))
                    start = clock.now
                    blackHole(try await client.get("/train", as: BenchTrain.self))
                    ours.append(microseconds(clock.now - start))
                }
                benchmark.measurement(latencyMetrics[0], median(raw))
                benchmark.measurement(latencyMetrics[1], median(ours))
                benchmark.measurement(latencyMetrics[2], median(ours) * 100 / max(1, median(raw)))
            }
        }

        let throughputMetrics =
            [
                .custom("raw (requests/s)", polarity: .prefersLarger, useScalingFactor: false),
                .custom("APIClient (requests/s)", polarity: .prefersLarger, useScalingFactor: false),
                .custom("ratio APIClient/raw throughput (%)", polarity: .prefersLarger, useScalingFactor: false),
            ] as [BenchmarkMetric]
        let perClient = 50
        Benchmark(
            "32 concurrent clients \(name), 1600 GETs a side, paired",
            configuration: .init(
                metrics: throughputMetrics, warmupIterations: 1, maxDuration: .seconds(90), maxIterations: 12)
        ) { benchmark in
            let server = try await BenchServer.shared.value
            var configuration = APIClient.Configuration(
                baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: transport)
            // BENCH_NO_DEDUPE=1 measures the client without the request coalescer, to see its cost.
            configuration.deduplicatesRequests = ProcessInfo.processInfo.environment["BENCH_NO_DEDUPE"] == nil
            // BENCH_NO_RETRY=1 measures the client without the retry layer.
            if ProcessInfo.processInfo.environment["BENCH_NO_RETRY"] != nil { configuration.retryPolicy = .none }
            let client = APIClient(configuration: configuration)
            for iteration in benchmark.scaledIterations {
                var rawRate = 0
                var oursRate = 0
                for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                    let start = clock.now
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for worker in 0..<32 {
                            group.addTask {
                                for index in 0..<perClient {
                                    let n = worker * perClient + index
                                    if side == 0 {
                                        let request = HTTPRequest(
                                            method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)",
                                            path: "/train?n=\(n)")
                                        let (_, body) = try await transport.send(
                                            request, body: nil, metadata: RequestMetadata())
                                        blackHole(try rawDecoder.decode(BenchTrain.self, from: body))
                                    } else {
                                        blackHole(
                                            try await client.get(
                                                "/train", parameters: ["n": .int(Int64(n))], as: BenchTrain.self))
                                    }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                    let rate = 32 * perClient * 1_000_000 / max(1, microseconds(clock.now - start))
                    if side == 0 { rawRate = rate } else { oursRate = rate }
                }
                benchmark.measurement(throughputMetrics[0], rawRate)
                benchmark.measurement(throughputMetrics[1], oursRate)
                benchmark.measurement(throughputMetrics[2], oursRate * 100 / max(1, rawRate))
            }
        }
    }

    // MARK: - De-duplication

    Benchmark(
        "100 concurrent identical GETs",
        configuration: .init(metrics: [.wallClock, metric("server requests per 100 GETs")], maxIterations: 5)
    ) { benchmark in
        let server = try await BenchServer.shared.value
        let client = APIClient(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: MonoRail.defaultTransport)
        for _ in benchmark.scaledIterations {
            let before = server.count
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    group.addTask { blackHole(try await client.get("/count", as: BenchTrain.self)) }
                }
                try await group.waitForAll()
            }
            benchmark.measurement(metric("server requests per 100 GETs"), server.count - before)
        }
    }
}

/// Answers every request with the one-record payload at once, so the client's own CPU cost can be
/// measured without a network or a server.
struct InMemoryTransport: Transport {
    let body: Data
    func send(_ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata) async throws -> (
        HTTPResponse, Data
    ) {
        (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), self.body)
    }
}

let overheadBenchmarks: @Sendable () -> Void = {
    let rawDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
    let overheadMetrics = [
        metric("raw decode (ns)"), metric("APIClient.get (ns)"), metric("MonoRail decode only (ns)"),
        metric("APIClient.get without de-duplication (ns)"),
    ]
    Benchmark(
        "client CPU per small GET, in-memory transport",
        configuration: .init(
            metrics: overheadMetrics, warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 20)
    ) { benchmark in
        let transport = InMemoryTransport(body: Payload.train1)
        let client = APIClient(baseURL: URL(string: "http://127.0.0.1:1")!, transport: transport)
        let direct = client.configured { $0.deduplicatesRequests = false }
        let decoder = ResponseDecoder()
        let clock = ContinuousClock()
        for _ in benchmark.scaledIterations {
            let rounds = 2000
            var start = clock.now
            for _ in 0..<rounds { blackHole(try rawDecoder.decode(BenchTrain.self, from: Payload.train1)) }
            let raw = clock.now - start
            start = clock.now
            for n in 0..<rounds {
                blackHole(try await client.get("/train", parameters: ["n": .int(Int64(n))], as: BenchTrain.self))
            }
            let ours = clock.now - start
            start = clock.now
            for _ in 0..<rounds { blackHole(try decoder.decode(BenchTrain.self, from: Payload.train1).value) }
            let decodeOnly = clock.now - start
            benchmark.measurement(overheadMetrics[0], microseconds(raw) * 1000 / rounds)
            benchmark.measurement(overheadMetrics[1], microseconds(ours) * 1000 / rounds)
            benchmark.measurement(overheadMetrics[2], microseconds(decodeOnly) * 1000 / rounds)
            start = clock.now
            for n in 0..<rounds {
                blackHole(try await direct.get("/train", parameters: ["n": .int(Int64(n))], as: BenchTrain.self))
            }
            benchmark.measurement(overheadMetrics[3], microseconds(clock.now - start) * 1000 / rounds)
        }
    }
}
