import BenchSupport
import Benchmark
import Foundation
import MonoRail

// Live queries against the same merge with none, measured in one process, alternating: 10,000
// records merged into a store holding 100 live queries of 1,000 records each (overlapping id
// ranges, sorted by max_speed), and into a store holding the same 10,000 instances and no query.
// Each merge changes every record's max_speed, so every record moves in each of the ~11 queries
// that hold it: the work of keeping them sorted, not a merge that changes nothing.
//
// The reference server runs in a process of its own: `swift build -c release --product RoundTripServer`.

@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
}

let server = Result { try ServerProcess.start(arguments: ["--trains", "10000"]) }

/// A list body of the 10,000 trains with the speeds of `round`: each round moves every train.
func body(round: Int) -> Data {
    var text = #"{"trains": ["#
    for id in 1...10_000 {
        if id > 1 { text += "," }
        let speed = Double((id * 7919 + round * 104_729) % 2400) / 10 + 80
        text += #"{"id": \#(id), "max_speed": \#(speed)}"#
    }
    return Data((text + "]}").utf8)
}

/// A list body of the 10,000 trains with the companies of `round`: every train changes, in a field
/// no query reads.
func companyBody(round: Int) -> Data {
    var text = #"{"trains": ["#
    for id in 1...10_000 {
        if id > 1 { text += "," }
        text += #"{"id": \#(id), "company": "Company \#((id + round) % 7)"}"#
    }
    return Data((text + "]}").utf8)
}

let benchmarks: @Sendable () -> Void = {
    let clock = ContinuousClock()

    /// Two stores holding the same 10,000 trains, one with 100 live queries of 1,000 records each
    /// (overlapping id ranges, sorted by max_speed).
    func stores(_ server: ServerProcess) async throws -> (ResourceStore, ResourceStore, [Any]) {
        let configuration = MonoRail.Configuration(apiRootURL: server.baseURL, retryPolicy: .none)
        let plain = ResourceStore(configuration: configuration)
        let watched = ResourceStore(configuration: configuration)
        let heldPlain = try await Train.get(in: plain)
        let heldWatched = try await Train.get(in: watched)
        precondition(heldPlain.count >= 10_000 && heldWatched.count >= 10_000, "the server holds 10,000 trains")
        var queries: [ResourceQuery<Train>] = []
        for index in 0..<100 {
            let lowest = index * 90 + 1
            queries.append(
                try await Train.query(
                    where: ["id": .between(.int(Int64(lowest)), .int(Int64(lowest + 999)))],
                    order: [.descending("max_speed")], in: watched))
        }
        precondition(queries.allSatisfy { $0.instances.count == 1000 }, "each query holds 1,000 instances")
        return (plain, watched, [heldPlain, heldWatched, queries])
    }

    func paired(_ name: String, bodies: [Data]) {
        Benchmark(
            name,
            configuration: .init(
                metrics: [
                    metric("merge, no query (ms)"), metric("merge, 100 queries (ms)"), metric("ratio queries/none (%)"),
                ],
                warmupIterations: 1, maxDuration: .seconds(90), maxIterations: 20)
        ) { benchmark in
            let (plain, watched, held) = try await stores(try server.get())
            let queries = held.compactMap { $0 as? [ResourceQuery<Train>] }.first ?? []
            var round = 0
            for iteration in benchmark.scaledIterations {
                let data = bodies[round % bodies.count]
                round += 1
                var times = [Duration.zero, Duration.zero]
                for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                    let start = clock.now
                    blackHole(try Train.merge(listBody: data, in: side == 0 ? plain : watched).count)
                    times[side] = clock.now - start
                }
                let speeds = queries[round % 100].instances.map { $0.maxSpeed ?? 0 }
                precondition(speeds == speeds.sorted(by: >), "the query stays sorted")
                benchmark.measurement(metric("merge, no query (ms)"), microseconds(times[0]) / 1000)
                benchmark.measurement(metric("merge, 100 queries (ms)"), microseconds(times[1]) / 1000)
                benchmark.measurement(
                    metric("ratio queries/none (%)"), microseconds(times[1]) * 100 / max(1, microseconds(times[0])))
            }
            // Every query still holds its 1,000 instances, and no other, in order.
            for (index, query) in queries.enumerated() {
                let instances = query.instances
                let ids = Set(instances.compactMap { Int($0.id?.description ?? "") })
                let speeds = instances.map { $0.maxSpeed ?? 0 }
                precondition(ids == Set(index * 90 + 1...index * 90 + 1000), "query \(index) holds its range")
                precondition(speeds == speeds.sorted(by: >), "query \(index) stays sorted")
            }
            blackHole(held.count)
        }
    }

    paired(
        "merge 10,000 records that all move: 100 live queries × 1,000 kept sorted vs no query, paired",
        bodies: (0..<4).map(body(round:)))
    paired(
        "merge 10,000 records changed in a field no query reads: 100 live queries vs no query, paired",
        bodies: (0..<4).map(companyBody(round:)))
}
