import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the reference server with its faults on, starts the app again and again on one SQLite file
/// and kills it with SIGKILL at random moments, lets the last launch finish, and checks the server's
/// idempotency ledger and records against the script.
struct HarnessParent {
    let writes: Int
    let kills: Int
    let seed: UInt64
    let directory: URL

    struct Report: Codable, CustomStringConvertible {
        var writes: Int
        var kills: Int
        var launches: Int
        var applied: Int
        var lost: Int
        var duplicated: Int
        var refused: Int
        var stateMatches: Bool
        var seconds: Double
        var problems: [String]

        var passed: Bool { lost == 0 && duplicated == 0 && refused == 0 && stateMatches && problems.isEmpty }

        var description: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }

    func run() async throws -> Report {
        let started = ContinuousClock.now
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let faults = FaultInjection(
            latency: .milliseconds(1), failureRate: 0.02, failureStatus: 503, retryAfter: 1, dropRate: 0.05)
        let server = try await ReferenceServer(
            schema: .trains,
            configuration: .init(
                port: 0, databasePath: directory.appendingPathComponent("server.sqlite").path, faults: faults)
        ).start()
        let script = HarnessScript(seed: seed, count: writes)
        var (delivered, launches, problems) = try await killLaunches(server: server.baseURL)
        launches += 1
        let last = try launch(server: server.baseURL)
        let limit = Date().addingTimeInterval(600)
        while last.isRunning, Date() < limit { try await Task.sleep(for: .milliseconds(20)) }
        if last.isRunning {
            kill(last.processIdentifier, SIGKILL)
            problems.append("the last launch did not empty the outbox within 10 minutes")
        } else if last.terminationStatus != 0 {
            problems.append("the last launch exited \(last.terminationStatus)")
        }
        let left = try SQLiteStorage(path: databasePath).pendingWrites().count
        if left != 0 { problems.append("\(left) writes are still kept") }

        // Every write has one key; the ledger holds each key once, with its effect.
        let ledger = try server.store.idempotencyLedger()
        let applied = ledger.filter { (200..<300).contains($0.status) }.count
        let refused = ledger.count - applied
        let state = try serverState(server, script: script)
        let expected = script.expected
        var matches = state.trains == expected.trains && state.cars == expected.cars
        if state.trains.count != expected.trains.count {
            problems.append("\(state.trains.count) trains on the server, \(expected.trains.count) expected")
            matches = false
        }
        if state.cars != expected.cars {
            let extra = Set(state.cars).subtracting(expected.cars).sorted().prefix(5)
            let missing = Set(expected.cars).subtracting(state.cars).sorted().prefix(5)
            problems.append("cars differ: extra \(Array(extra)), missing \(Array(missing))")
        }
        await server.stop()
        return Report(
            writes: writes, kills: delivered, launches: launches, applied: applied,
            lost: max(0, writes - applied), duplicated: max(0, applied - writes), refused: refused,
            stateMatches: matches, seconds: (ContinuousClock.now - started).timeInterval, problems: problems)
    }

    /// Launches children and kills each at a random moment, until `kills` were delivered or a
    /// launch finished first: the kills delivered, the launches, and what went wrong.
    private func killLaunches(server: URL) async throws -> (delivered: Int, launches: Int, problems: [String]) {
        var random = SplitMix64(seed: seed ^ 0x5EED)
        var delivered = 0
        var launches = 0
        var problems: [String] = []
        while delivered < kills {
            launches += 1
            let child = try launch(server: server)
            // Most kills land while the launch queues or sends; a few before it has done anything.
            let delay = Double(10 + Int(random.next() % 250)) / 1000
            let deadline = Date().addingTimeInterval(delay)
            while child.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
            guard child.isRunning else {
                // It finished before the kill: nothing is left to interrupt.
                if child.terminationStatus != 0 {
                    problems.append("launch \(launches) exited \(child.terminationStatus)")
                }
                break
            }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            delivered += 1
        }
        return (delivered, launches, problems)
    }

    var databasePath: String { directory.appendingPathComponent("app.sqlite").path }

    private func launch(server: URL) throws -> Process {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [
            "--child", "--database", databasePath, "--server", server.absoluteString, "--seed", String(seed),
            "--writes", String(writes), "--marker", directory.appendingPathComponent("queued").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return process
    }

    /// This run's trains by company, and their cars.
    private func serverState(_ server: RunningReferenceServer, script: HarnessScript) throws
        -> (trains: [String: Int?], cars: [CarState])
    {
        let schema = server.store.schema
        guard let trainSchema = schema.resource(plural: "trains"), let carSchema = schema.resource(plural: "cars")
        else { throw HarnessError("the server has no trains or cars") }
        let prefix = "H-\(script.tag)-"
        var trains: [String: Int?] = [:]
        var companies: [String: String] = [:]
        for record in try server.store.list(trainSchema, filters: [:]).records {
            guard let company = record["company"]?.stringValue, company.hasPrefix(prefix),
                let id = record["id"]?.intValue
            else { continue }
            // `.some`: a train with no number of cars is still a train, not a removed key.
            let count: Int? = record["number_of_cars"]?.intValue.map { Int($0) }
            trains[company] = .some(count)
            companies[String(id)] = company
        }
        var cars: [CarState] = []
        for record in try server.store.list(carSchema, filters: [:]).records {
            guard let train = record["train_id"]?.intValue, let company = companies[String(train)] else { continue }
            cars.append(CarState(company: company, occupancy: Int(record["occupancy"]?.intValue ?? -1)))
        }
        return (trains, cars.sorted())
    }
}

extension Duration {
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
