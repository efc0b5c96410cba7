import BenchSupport
import Benchmark
import Foundation
import MonoRail
import MonoRailSQLite

// The outbox against its baselines, each pair measured in one process:
// - keeping a save (the optimistic change on the instance and the write committed to SQLite) against
//   the same save sent directly to the reference server on loopback, alternating, p50 of each;
// - replaying 1,000 kept writes against the reference server (flush) against sending the same 1,000
//   saves directly one after another, for writes of one record and of 100: writes per second of each.
//
// The reference server runs in a process of its own: `swift build -c release --product RoundTripServer`.

@Resource(name: "train")
final class Train {
    var company: String?
    var numberOfCars: Int?
}

let server = Result { try ServerProcess.start() }
let directory: URL = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-outbox-bench-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}()
/// Where nothing listens: a store pointed here keeps its writes and sends none.
let unreachable = URL(string: "http://127.0.0.1:1")

func makeStore(_ url: URL?, policy: WritePolicy, file: String) throws -> ResourceStore {
    var configuration = MonoRail.Configuration(apiRootURL: url, retryPolicy: .none)
    configuration.writePolicy = policy
    configuration.storage = try SQLiteStorage(path: directory.appendingPathComponent(file).path)
    return ResourceStore(configuration: configuration)
}

/// A train created on the server, read into `store`.
func train(in store: ResourceStore, server: ServerProcess) async throws -> Train {
    let made = Train()
    made.company = "Bench Rail"
    let direct = try makeStore(server.baseURL, policy: .direct, file: "seed-\(UUID()).sqlite")
    try await made.create(in: direct)
    guard let id = made.id else { throw ServerError("the server gave the train no id") }
    store.configure { $0.apiRootURL = server.baseURL }
    let read = try await Train.get(id: id, in: store)
    return read
}

let benchmarks: @Sendable () -> Void = {
    let clock = ContinuousClock()

    Benchmark(
        "keep a save in the outbox (optimistic + durable) vs send it directly, p50, paired",
        configuration: .init(
            metrics: [
                metric("direct save p50 (µs)"), metric("kept save p50 (µs)"), metric("ratio kept/direct (%)"),
                metric("SQLite enqueue alone p50 (µs)"),
            ],
            warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 10)
    ) { benchmark in
        let server = try server.get()
        let directStore = try makeStore(server.baseURL, policy: .direct, file: "direct-\(UUID()).sqlite")
        let keptStore = try makeStore(server.baseURL, policy: .queued, file: "kept-\(UUID()).sqlite")
        let direct = try await train(in: directStore, server: server)
        let kept = try await train(in: keptStore, server: server)
        // From here the kept store cannot reach the server: what is timed is keeping, not sending.
        keptStore.configure { $0.apiRootURL = unreachable }
        // The commit alone, into a file of its own: what keeping costs before MonoRail's part.
        let bare = try SQLiteStorage(path: directory.appendingPathComponent("bare-\(UUID()).sqlite").path)
        var sequence: Int64 = 0
        for _ in benchmark.scaledIterations {
            var directTimes: [Int] = []
            var keptTimes: [Int] = []
            var bareTimes: [Int] = []
            for _ in 0..<300 {
                sequence += 1
                let write = PendingWrite(
                    sequence: sequence, idempotencyKey: UUID().uuidString, model: "train", verb: .update, id: 1,
                    body: ["company": "Bench Rail", "number_of_cars": .int(sequence % 1000)], fields: ["numberOfCars"])
                let start = clock.now
                try await bare.enqueue(write)
                bareTimes.append(nanoseconds(clock.now - start) / 1000)
            }
            for round in 0..<300 {
                for side in [round % 2, 1 - round % 2] {
                    let instance = side == 0 ? direct : kept
                    instance.numberOfCars = round % 1000
                    let start = clock.now
                    try await instance.save()
                    let elapsed = nanoseconds(clock.now - start) / 1000
                    if side == 0 { directTimes.append(elapsed) } else { keptTimes.append(elapsed) }
                }
            }
            benchmark.measurement(metric("direct save p50 (µs)"), median(directTimes))
            benchmark.measurement(metric("kept save p50 (µs)"), median(keptTimes))
            benchmark.measurement(
                metric("ratio kept/direct (%)"), median(keptTimes) * 100 / max(1, median(directTimes)))
            benchmark.measurement(metric("SQLite enqueue alone p50 (µs)"), median(bareTimes))
        }
    }

    // One record's writes go one after the other, as the direct saves do; writes of 100 records
    // go side by side (outboxLimits.concurrentWrites), where the direct saves still go one by one.
    for records in [1, 100] {
        Benchmark(
            "replay 1,000 kept writes of \(records) record(s) (flush) vs 1,000 direct saves, writes per second, paired",
            configuration: .init(
                metrics: [metric("direct (writes/s)"), metric("replay (writes/s)"), metric("ratio replay/direct (%)")],
                warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 8)
        ) { benchmark in
            let server = try server.get()
            for iteration in benchmark.scaledIterations {
                var rates = [0, 0]
                for side in [iteration % 2, 1 - iteration % 2] {
                    let policy: WritePolicy = side == 0 ? .direct : .queued
                    let store = try makeStore(server.baseURL, policy: policy, file: "replay-\(UUID()).sqlite")
                    var instances: [Train] = []
                    for _ in 0..<records { instances.append(try await train(in: store, server: server)) }
                    if side == 1 { store.configure { $0.apiRootURL = unreachable } }
                    var start = clock.now
                    for write in 0..<1000 {
                        let instance = instances[write % records]
                        instance.numberOfCars = write % 1000
                        try await instance.save()
                    }
                    if side == 1 {
                        // Kept while unreachable; the replay is what is timed.
                        store.configure { $0.apiRootURL = server.baseURL }
                        start = clock.now
                        try await store.outbox.flush()
                    }
                    let elapsed = clock.now - start
                    rates[side] = 1_000_000 * 1000 / max(1, microseconds(elapsed))
                }
                benchmark.measurement(metric("direct (writes/s)"), rates[0])
                benchmark.measurement(metric("replay (writes/s)"), rates[1])
                benchmark.measurement(metric("ratio replay/direct (%)"), rates[1] * 100 / max(1, rates[0]))
            }
        }
    }
}
