import AsyncHTTPClient
import BenchSupport
import Benchmark
import Foundation
import MonoRail
import NIOCore

// A small GET measured from outside: `Train.get(id: 1)` of a record with a nested `Codable` value,
// a date and a string array, against AsyncHTTPClient + `JSONDecoder` into a struct, both talking to
// a fast server in another process (Python's `http.server` answering from memory, Scripts/
// fast_server.py), so that the server's own time dilutes the ratio as little as a real fast server
// would. The sides take turns request by request; the app holds the instance, so each answer
// merges into it. What is left between the two is MonoRail's fixed cost per action.

@Resource
final class Train {
    var company: String?
    var builtAt: Date?
    var tags: [String] = []
    var depot: Depot?
}

struct Depot: Codable, Sendable, Equatable {
    var city: String
    var platforms: Int
}

/// The same record as a plain struct, for the baseline.
struct PlainTrain: Decodable {
    var id: Int
    var company: String?
    var builtAt: Date?
    var tags: [String]
    var depot: Depot?

    enum CodingKeys: String, CodingKey {
        case id, company, tags, depot
        case builtAt = "built_at"
    }
}

struct TrainRoot: Decodable {
    var train: PlainTrain
}

/// The Python server, started once per benchmark run.
let fastServer = Result {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/fast_server.py")
    return try ServerProcess.start(executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", script.path])
}

let benchmarks: @Sendable () -> Void = {
    let clock = ContinuousClock()
    let metrics = [
        metric("AsyncHTTPClient + JSONDecoder p50 (µs)"), metric("Train.get p50 (µs)"),
        metric("ratio Train.get/raw p50 (%)"), metric("APIClient.send p50 (µs)"),
        metric("ratio APIClient.send/raw p50 (%)"),
    ]
    Benchmark(
        "small GET from outside: Train.get(id: 1) vs AsyncHTTPClient + JSONDecoder, Python http.server, paired",
        configuration: .init(metrics: metrics, warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 15)
    ) { benchmark in
        let server = try fastServer.get()
        let url = "http://127.0.0.1:\(server.port)/trains/1"
        let http = HTTPClient.shared
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let root = URL(string: "http://127.0.0.1:\(server.port)") else { throw ServerError("no URL") }
        let store = ResourceStore(configuration: .init(apiRootURL: root))
        // The client layer alone, on the same transport: which layer a difference comes from.
        let client = APIClient(baseURL: root, transport: MonoRail.defaultTransport)
        var held: Train?
        for _ in benchmark.scaledIterations {
            var raw: [Int] = []
            var model: [Int] = []
            var api: [Int] = []
            for round in 0..<400 {
                for side in [0, 1, 2].shifted(by: round % 3) {
                    let start = clock.now
                    if side == 0 {
                        var request = HTTPClientRequest(url: url)
                        request.headers.add(name: "Accept", value: "application/json")
                        let response = try await http.execute(request, timeout: .seconds(30))
                        let body = try await response.body.collect(upTo: 1 << 20)
                        blackHole(try decoder.decode(TrainRoot.self, from: Data(body.readableBytesView)))
                        raw.append(microseconds(clock.now - start))
                    } else if side == 1 {
                        held = try await Train.get(id: 1, in: store)
                        model.append(microseconds(clock.now - start))
                    } else {
                        blackHole(try await client.send(APIRequest(method: .get, path: "/trains/1")).body)
                        api.append(microseconds(clock.now - start))
                    }
                }
            }
            if held?.depot?.platforms != 4 || held?.tags.count != 3 || held?.builtAt == nil {
                throw ServerError("Train.get did not read the record: \(String(describing: held?.depot))")
            }
            benchmark.measurement(metrics[0], median(raw))
            benchmark.measurement(metrics[1], median(model))
            benchmark.measurement(metrics[2], median(model) * 100 / max(1, median(raw)))
            benchmark.measurement(metrics[3], median(api))
            benchmark.measurement(metrics[4], median(api) * 100 / max(1, median(raw)))
        }
    }

    // Allocations of one small GET: the same 1,000 requests, each benchmark on its own so the
    // malloc interposer counts one side; the difference per request is what the model layer adds
    // to the client's own.
    let allocationRuns = 1000
    Benchmark(
        "allocations: 1,000 × APIClient.send of the small GET",
        configuration: .init(metrics: [.mallocCountTotal], warmupIterations: 1, maxIterations: 5)
    ) { benchmark in
        let server = try fastServer.get()
        guard let root = URL(string: "http://127.0.0.1:\(server.port)") else { throw ServerError("no URL") }
        let client = APIClient(baseURL: root, transport: MonoRail.defaultTransport)
        blackHole(try await client.send(APIRequest(method: .get, path: "/trains/1")).body)
        benchmark.startMeasurement()
        for _ in 0..<allocationRuns {
            blackHole(try await client.send(APIRequest(method: .get, path: "/trains/1")).body)
        }
        benchmark.stopMeasurement()
    }
    Benchmark(
        "allocations: 1,000 × Train.get(id: 1) of the small GET, the instance held",
        configuration: .init(metrics: [.mallocCountTotal], warmupIterations: 1, maxIterations: 5)
    ) { benchmark in
        let server = try fastServer.get()
        guard let root = URL(string: "http://127.0.0.1:\(server.port)") else { throw ServerError("no URL") }
        let store = ResourceStore(configuration: .init(apiRootURL: root))
        let held = try await Train.get(id: 1, in: store)
        benchmark.startMeasurement()
        for _ in 0..<allocationRuns {
            blackHole(try await Train.get(id: 1, in: store))
        }
        benchmark.stopMeasurement()
        blackHole(held)
    }
}
