import Foundation
import MonoRailServer
import MonoRailTesting
import TestServer
import Testing

/// The deterministic simulator: seeded schedules of lost and overtaken answers, other clients (also
/// between pages), pushes, restarts and kills, sign-outs and clock steps against the reference
/// server, each checked for what must never happen.
///
/// `MONORAIL_SIMULATOR_SEEDS=<n>` runs seeds 1 to n (500 by default, as CI does);
/// `MONORAIL_SIMULATOR_SEED=<seed>` runs one, to replay a failure.
@Suite("Simulator: seeded schedules at the edges of time", .timeLimit(.minutes(20)))
struct SimulatorTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["MONORAIL_SIMULATOR_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["MONORAIL_SIMULATOR_SEEDS"].flatMap(Int.init) ?? 500
        return (1...UInt64(max(1, count))).map { $0 }
    }

    @Test("every schedule reaches quiescence with every invariant holding")
    func schedules() async throws {
        var failures: [String] = []
        for seed in Self.seeds {
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let path = directory.appendingPathComponent("app.sqlite").path
                let simulation = Simulation(seed: seed)
                try await withReferenceServer(schema: .trains, configuration: simulation.server) { api in
                    let broken = try await simulation.run(api: api, path: path)
                    if !broken.isEmpty { failures.append(broken.joined(separator: "\n")) }
                }
            }
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }
}
