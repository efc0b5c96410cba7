import Foundation
import MonoRailServer
import MonoRailTesting
import TestServer
import Testing

/// The deterministic simulator: seeded schedules of lost and overtaken answers, other clients (also
/// between pages), pushes, restarts and kills, sign-outs and clock steps against the reference
/// server, each checked for what must never happen.
///
/// `MONORAIL_SIMULATOR_SEEDS=<n>` runs n seeds (500 by default, as CI does), from
/// `MONORAIL_SIMULATOR_FROM` (1 by default), `MONORAIL_SIMULATOR_PARALLEL` at a time (1 by
/// default: a long run uses more); `MONORAIL_SIMULATOR_SEED=<seed>` runs one, to replay a failure.
@Suite("Simulator: seeded schedules at the edges of time", .timeLimit(.minutes(20)))
struct SimulatorTests {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    static var seeds: [UInt64] {
        if let one = environment["MONORAIL_SIMULATOR_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["MONORAIL_SIMULATOR_SEEDS"].flatMap(Int.init) ?? 500
        let first = environment["MONORAIL_SIMULATOR_FROM"].flatMap(UInt64.init) ?? 1
        return (0..<UInt64(max(1, count))).map { first + $0 }
    }

    @Test("every schedule reaches quiescence with every invariant holding")
    func schedules() async throws {
        let seeds = Self.seeds
        let parallel = max(1, Self.environment["MONORAIL_SIMULATOR_PARALLEL"].flatMap(Int.init) ?? 1)
        var failures: [String] = []
        var next = 0
        try await withThrowingTaskGroup(of: [String].self) { group in
            func start() {
                guard next < seeds.count else { return }
                let seed = seeds[next]
                next += 1
                group.addTask { try await Self.run(seed) }
            }
            for _ in 0..<parallel { start() }
            var finished = 0
            while let broken = try await group.next() {
                finished += 1
                if !broken.isEmpty {
                    failures.append(broken.joined(separator: "\n"))
                    // A long run goes on: each failure is printed as it is found.
                    print(broken.joined(separator: "\n"))
                }
                if finished % 1000 == 0 { print("simulator: \(finished) of \(seeds.count) schedules run") }
                if failures.count < 3 || seeds.count > 1000 { start() }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    /// One schedule, with its own server and file.
    static func run(_ seed: UInt64) async throws -> [String] {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            let simulation = Simulation(seed: seed)
            return try await withReferenceServer(schema: .trains, configuration: simulation.server) { api in
                try await simulation.run(api: api, path: path)
            }
        }
    }
}
