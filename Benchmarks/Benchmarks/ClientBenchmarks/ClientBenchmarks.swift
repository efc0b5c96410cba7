import Benchmark
import Foundation
import MonoRail
import MonoRailAsyncHTTPClient

// Every budget is a ratio against a baseline measured in the same run:
// - decode: MonoRail's envelope + codec path vs raw JSONDecoder into the same structs (≤ 1.15×);
// - small GET p50: APIClient vs the raw transport, per transport (≤ 1.1×);
// - 32 concurrent clients: APIClient throughput vs the raw transport's (≥ 0.9×);
// - 100 concurrent identical GETs: the server counts exactly 1.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 3,
        maxDuration: .seconds(10),
        maxIterations: 200)

    // MARK: - Decoding 10,000 records

    let rawDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
    let monoRail = ResponseDecoder()

    Benchmark("decode 10k trains: raw JSONDecoder (baseline)") { benchmark in
        let data = Payload.trains
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try rawDecoder.decode(BenchTrainsRoot.self, from: data).trains.count)
        }
    }

    Benchmark("decode 10k trains: MonoRail envelope + codec") { benchmark in
        let data = Payload.trains
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try monoRail.decode([BenchTrain].self, from: data, roots: ["trains"]).value.count)
        }
    }

    // MARK: - Small GETs, per transport

    let transports: [(String, any Transport)] = [
        ("AsyncHTTPClient", AsyncHTTPClientTransport()),
        ("URLSession", URLSessionTransport.shared),
    ]
    let latency = Benchmark.Configuration(
        metrics: [.wallClock, .throughput], warmupIterations: 50, maxDuration: .seconds(8), maxIterations: 4000)
    for (name, transport) in transports {
        Benchmark("small GET p50 \(name): raw transport (baseline)", configuration: latency) { benchmark in
            let server = try await BenchServer.shared.value
            let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/train")
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                let (_, body) = try await transport.send(request, body: nil, metadata: RequestMetadata())
                blackHole(try rawDecoder.decode(BenchTrain.self, from: body))
            }
        }
        Benchmark("small GET p50 \(name): APIClient", configuration: latency) { benchmark in
            let server = try await BenchServer.shared.value
            let client = APIClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: transport)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await client.get("/train", as: BenchTrain.self))
            }
        }

        let concurrent = Benchmark.Configuration(
            metrics: [.wallClock, .throughput], warmupIterations: 1, maxDuration: .seconds(15), maxIterations: 12)
        let perClient = 50
        Benchmark("32 concurrent clients \(name): raw transport (baseline), 1600 GETs", configuration: concurrent) { benchmark in
            let server = try await BenchServer.shared.value
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<32 {
                        group.addTask {
                            for index in 0..<perClient {
                                let request = HTTPRequest(
                                    method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)",
                                    path: "/train?n=\(worker * perClient + index)")
                                let (_, body) = try await transport.send(request, body: nil, metadata: RequestMetadata())
                                blackHole(try rawDecoder.decode(BenchTrain.self, from: body))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        Benchmark("32 concurrent clients \(name): APIClient, 1600 GETs", configuration: concurrent) { benchmark in
            let server = try await BenchServer.shared.value
            let client = APIClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: transport)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<32 {
                        group.addTask {
                            for index in 0..<perClient {
                                blackHole(try await client.get("/train", parameters: ["n": .int(Int64(worker * perClient + index))], as: BenchTrain.self))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    // MARK: - De-duplication

    Benchmark(
        "100 concurrent identical GETs: server requests",
        configuration: .init(metrics: [.wallClock, .custom("server requests per 100 GETs", useScalingFactor: false)], maxIterations: 5)
    ) { benchmark in
        let server = try await BenchServer.shared.value
        let client = APIClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: MonoRail.defaultTransport)
        for _ in benchmark.scaledIterations {
            let before = server.count
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    group.addTask { blackHole(try await client.get("/count", as: BenchTrain.self)) }
                }
                try await group.waitForAll()
            }
            benchmark.measurement(.custom("server requests per 100 GETs", useScalingFactor: false), server.count - before)
        }
    }
}
