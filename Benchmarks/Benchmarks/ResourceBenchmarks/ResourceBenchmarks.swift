import BenchPayload
import BenchSupport
import Benchmark
import Foundation
import MonoRail

// Decoding the 10,000-record index response into @Resource models, identity-map merge included,
// against raw JSONDecoder into plain structs. Baseline and MonoRail alternate inside each iteration
// (A, B, B, A, …) so machine drift hits both; each iteration records both times and their ratio.

let benchmarks: @Sendable () -> Void = {
    let rawDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
    let clock = ContinuousClock()
    let configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))

    /// Runs `ours` against the raw decoder, interleaved, and records the times and the ratio.
    func paired(
        _ name: String, metrics: [BenchmarkMetric], setUp: @escaping () throws -> Void = {},
        _ ours: @escaping () throws -> Int
    ) {
        Benchmark(
            name,
            configuration: .init(metrics: metrics, warmupIterations: 2, maxDuration: .seconds(40), maxIterations: 30)
        ) { benchmark in
            let data = Payload.trains
            precondition(data.count > 1_000_000, "the payload generator did not run")
            for iteration in benchmark.scaledIterations {
                try setUp()
                var raw = Duration.zero
                var mine = Duration.zero
                for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                    let start = clock.now
                    if side == 0 {
                        blackHole(try rawDecoder.decode(BenchTrainsRoot.self, from: data).trains.count)
                        raw = clock.now - start
                    } else {
                        blackHole(try ours())
                        mine = clock.now - start
                    }
                }
                benchmark.measurement(metrics[0], microseconds(raw) / 1000)
                benchmark.measurement(metrics[1], microseconds(mine) / 1000)
                benchmark.measurement(metrics[2], microseconds(mine) * 100 / max(1, microseconds(raw)))
            }
        }
    }

    // A fresh store every iteration: 10,000 new instances enter the identity map.
    var freshStore = ResourceStore(configuration: configuration)
    var kept: [ModelTrain] = []
    paired(
        "decode 10k into models + identity map (new), paired",
        metrics: [metric("raw JSONDecoder (ms)"), metric("MonoRail models (ms)"), metric("ratio models/raw (%)")],
        setUp: {
            kept = []
            freshStore = ResourceStore(configuration: configuration)
        }
    ) {
        kept = try ModelTrain.merge(listBody: Payload.trains, in: freshStore)
        return kept.count
    }

    // The same 10,000 again into a store that holds them all: every record is a hit.
    let warmStore = ResourceStore(configuration: configuration)
    let held = (try? ModelTrain.merge(listBody: Payload.trains, in: warmStore)) ?? []
    paired(
        "re-merge 10k, all hits, paired",
        metrics: [metric("raw JSONDecoder (ms)"), metric("MonoRail re-merge (ms)"), metric("ratio re-merge/raw (%)")]
    ) {
        precondition(held.count == 10_000)
        return try ModelTrain.merge(listBody: Payload.trains, in: warmStore).count
    }

    // Memory: what merging the list allocates, read in place and, as before, through a tree. What is
    // kept is measured as the resident growth across the merge with free heap returned to the system
    // before and after (`malloc_trim`); what the merge needed beside it is at most the bytes it
    // allocated (the harness's count, for the merge alone) less what it kept: not all of that is
    // alive at once.
    for (name, merge) in [
        ("read in place", { store in try ModelTrain.merge(listBody: Payload.trains, in: store) as [AnyObject] }),
        ("through a tree", { store in try TreeModelTrain.merge(listBody: Payload.trains, in: store) as [AnyObject] }),
    ] as [(String, (ResourceStore) throws -> [AnyObject])] {
        let keptMetric = metric("kept (KB)")
        var instances: [AnyObject] = []
        Benchmark(
            "memory: 10k new instances from the JSON list, \(name)",
            configuration: .init(
                metrics: [keptMetric, .mallocCountTotal, .mallocBytesCount], warmupIterations: 2,
                maxDuration: .seconds(30), maxIterations: 20)
        ) { benchmark in
            precondition(Payload.trains.count > 1_000_000, "the payload generator did not run")
            for _ in benchmark.scaledIterations {
                instances = []
                let store = ResourceStore(configuration: configuration)
                Memory.trim()
                let before = Memory.resident().now
                benchmark.startMeasurement()
                instances = try merge(store)
                benchmark.stopMeasurement()
                Memory.trim()
                benchmark.measurement(keptMetric, max(0, Memory.resident().now - before) / 1024)
            }
        }
    }

    // The seeds' reflection approach, for comparison.
    paired(
        "seeds' JSONSerialization + Mirror assignment, paired",
        metrics: [metric("raw JSONDecoder (ms)"), metric("reflection (ms)"), metric("ratio reflection/raw (%)")]
    ) {
        let root = try JSONSerialization.jsonObject(with: Payload.trains) as? [String: Any]
        let records = root?["trains"] as? [[String: Any]] ?? []
        return records.map { ReflectedTrain(dictionary: $0) }.count
    }
}
