import Foundation
import MonoRail
import MonoRailClient
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// 1,000 writes by another client while the app — this test binary run again as a process of its
/// own, with its SQLite file — is stopped 20 times at random points, killed in half of them: every
/// change is kept exactly once, in order, and the app's records end as the server's.
@Suite("Live updates through kills and restarts", .timeLimit(.minutes(5)))
struct LiveChaosTests {
    static let file = ProcessInfo.processInfo.environment["MONORAIL_LIVE_FILE"]
    static let api = ProcessInfo.processInfo.environment["MONORAIL_LIVE_API"].flatMap(URL.init(string:))
    /// For the last run: the event id to wait for before stopping.
    static let until = ProcessInfo.processInfo.environment["MONORAIL_LIVE_UNTIL"]

    /// One run of the app: its process, what it printed, and how it was stopped.
    final class Run: Sendable {
        let process: Process
        let lines = Locked<[String]>([])
        let input = Pipe()
        let finished: Task<Int32, Never>

        init(file: String, api: URL, until: Int64?) throws {
            process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["--testing-library", "swift-testing", "--filter", "LiveChaosTests/app"]
            var environment = ["MONORAIL_LIVE_FILE": file, "MONORAIL_LIVE_API": api.absoluteString]
            if let until { environment["MONORAIL_LIVE_UNTIL"] = String(until) }
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            process.standardInput = input
            try process.run()
            let (process, lines) = (self.process, self.lines)
            finished = Task {
                await offPool {
                    var pending = Data()
                    // `availableData`: what the pipe holds now (`read(upToCount:)` waits for the count).
                    while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
                        pending += chunk
                        while let end = pending.firstIndex(of: 10) {
                            let line = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                            lines.withLock { $0.append(line) }
                            pending = pending[(end + 1)...]
                        }
                    }
                    process.waitUntilExit()
                    return process.terminationStatus
                }
            }
        }

        /// The event ids the app printed as kept, in order.
        var seen: [Int64] { lines.withLock { $0 }.compactMap { $0.hasPrefix("seen ") ? Int64($0.dropFirst(5)) : nil } }

        /// The cursor the app read from its file as it started; `nil` for none.
        var resume: Int64? { value(after: "resume ") }

        /// The cursor once the stream was live: where this run's changes begin.
        var liveCursor: Int64? { value(after: "live ") }

        private func value(after prefix: String) -> Int64? {
            lines.withLock { $0 }.first { $0.hasPrefix(prefix) }.flatMap { Int64($0.dropFirst(prefix.count)) }
        }

        func waitUntilLive() async throws -> Bool {
            try await eventually(within: .seconds(20)) { lines.withLock { $0.contains { $0.hasPrefix("live ") } } }
        }

        /// Asks the app to stop: it disconnects, commits, and exits.
        func stop() async -> Int32 {
            try? input.fileHandleForWriting.close()
            return await finished.value
        }

        /// Kills the app where it stands.
        func kill() async -> Int32 {
            killProcess(process.processIdentifier)
            return await finished.value
        }
    }

    @Test("every change kept exactly once, in order, through 20 stops (10 kills); the records end as the server's")
    func chaos() async throws {
        var random = SystemRandomNumberGenerator()
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withReferenceServer(schema: .trains) { harness in
                let other = ResourceStore(configuration: harness.store.configuration)
                var ids: [ResourceID] = [1, 2]
                var writes = 0
                var runs: [(run: Run, killed: Bool)] = []
                let kills = Set((0..<20).shuffled(using: &random).prefix(10))
                for cycle in 0..<20 {
                    let run = try Run(file: path, api: harness.server.baseURL, until: nil)
                    try #require(try await run.waitUntilLive(), "run \(cycle): \(run.lines.withLock { $0 })")
                    // 50 writes a cycle; the app stops after a random number of them.
                    let stopAfter = Int.random(in: 0..<50, using: &random)
                    var status: Int32 = 0
                    for index in 0..<50 {
                        if index == stopAfter {
                            status = kills.contains(cycle) ? await run.kill() : await run.stop()
                        }
                        try await write(&ids, in: other, using: &random)
                        writes += 1
                        if Int.random(in: 0..<10, using: &random) == 0 { try await Task.sleep(for: .milliseconds(2)) }
                    }
                    if !kills.contains(cycle) { #expect(status == 0, "\(run.lines.withLock { $0 })") }
                    runs.append((run, kills.contains(cycle)))
                }
                #expect(writes == 1000)
                let newest = try harness.server.store.changeBounds().newest
                let last = try Run(file: path, api: harness.server.baseURL, until: newest)
                #expect(await last.stop() == 0, "\(last.lines.withLock { $0 })")
                runs.append((last, false))

                // What each run kept for good: what it merged up to where the next one resumed (a killed
                // run's tail, merged but not committed, comes again). Together: every change once, in order.
                let resumes = runs.map { $0.run.resume }
                #expect(resumes.first == .some(nil))
                var kept: [Int64] = []
                for (position, (run, killed)) in runs.enumerated() {
                    let seen = run.seen
                    #expect(zip(seen, seen.dropFirst()).allSatisfy { $1 == $0 + 1 }, "run \(position): \(seen)")
                    // Where its changes begin: the cursor it resumed from, or for the first, the one it was given.
                    let start = try #require(run.resume ?? run.liveCursor, "run \(position) never had a cursor")
                    #expect(seen.first.map { $0 == start + 1 } ?? true, "run \(position) began at \(start)")
                    guard position + 1 < runs.count, let next = resumes[position + 1] else {
                        kept += seen
                        continue
                    }
                    // The cursor never goes back.
                    #expect(next >= (resumes[position] ?? start), "run \(position + 1) resumed at \(next)")
                    if killed {
                        kept += seen.filter { $0 <= next }
                        // Killed between a commit and the line reporting it: the cursor, committed in
                        // the same transaction as the records, says they were kept.
                        let reported = seen.last ?? start
                        if next > reported { kept += Array((reported + 1)...next) }
                    } else {
                        #expect(
                            next == seen.last ?? start,
                            "run \(position) stopped cleanly, run \(position + 1) resumed at \(next)")
                        kept += seen
                    }
                }
                let first = try #require(runs.first?.run.liveCursor) + 1
                #expect(kept == Array(first...newest), "kept \(kept.count) of \(newest - first + 1)")

                // The app's records, in its file, are the server's.
                let storage = try SQLiteStorage(path: path)
                let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
                let onServer = try harness.server.store.list(trains, filters: [:]).records
                let keys = ids.map { RecordKey(model: "train", id: $0) }
                let stored = try await storage.records(keys)
                #expect(stored.count == onServer.count)
                for record in onServer {
                    let id = try #require(record["id"]?.intValue)
                    let body = try #require(stored[RecordKey(model: "train", id: ResourceID.int(Int64(id)))]?.body)
                    let kept = try MessagePackReader().readJSON(body)
                    #expect(kept["company"] == record["company"], "train \(id)")
                    #expect(kept["max_speed"] == record["max_speed"], "train \(id)")
                }
            }
        }
    }

    /// One write by the other client: a create, an update or a delete of a train it knows of.
    func write(_ ids: inout [ResourceID], in store: ResourceStore, using random: inout SystemRandomNumberGenerator)
        async throws
    {
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 35 || ids.count < 3 {
            let train = Train()
            train.company = "Made \(UUID().uuidString.prefix(8))"
            train.maxSpeed = Double(Int.random(in: 10...300, using: &random))
            try await train.create(in: store)
            ids.append(try #require(train.id))
        } else if roll < 85 {
            let id = try #require(ids.randomElement(using: &random))
            let train = try await Train.get(id: id, in: store)
            train.company = "Changed \(UUID().uuidString.prefix(8))"
            train.maxSpeed = Double(Int.random(in: 10...300, using: &random))
            try await train.save()
        } else {
            let position = Int.random(in: 0..<ids.count, using: &random)
            try await Train.get(id: ids[position], in: store).delete()
            ids.remove(at: position)
        }
    }

    /// The app: its records in the SQLite file, its stream resumed from the cursor kept there. Prints
    /// `live` once connected, `seen N` for each change kept, and stops when its standard input closes
    /// (or, for the last run, once it has merged MONORAIL_LIVE_UNTIL).
    @Test(.enabled(if: file != nil && api != nil))
    func app() async throws {
        let storage = try SQLiteStorage(path: try #require(Self.file))
        var configuration = MonoRail.Configuration(apiRootURL: Self.api)
        configuration.liveUpdates = .serverSentEvents(path: "/changes")
        configuration.liveUpdates?.reconnectDelay = .milliseconds(50)
        // Pushes may come before the app uses a model: the models they carry are registered.
        configuration.models.register(Train.self)
        let store = ResourceStore(configuration: configuration, storage: storage)
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        let said = Locked<String?>(nil)
        let listening = Task {
            for await event in store.liveUpdates.events {
                switch event {
                case .applied(_, _, _, let id?):
                    say("seen \(id)")
                    said.withLock { $0 = id }
                case .connected: say("connected")
                case .problem(let error): say("problem \(error.code): \(error.message)")
                default: break
                }
            }
        }
        try await Task.sleep(for: .milliseconds(10))
        let resume = try await storage.liveCursor(feed: "/changes")
        say("resume \(resume ?? "none")")
        if resume == nil {
            // The first run reads the records that came before any change.
            _ = try await Train.get(in: store)
        }
        try await store.liveUpdates.connect()
        _ = try await eventually { store.liveUpdates.lastEventID != nil }
        said.withLock { $0 = $0 ?? resume ?? store.liveUpdates.lastEventID }
        say("live \(store.liveUpdates.lastEventID ?? "")")
        if let until = Self.until {
            _ = try await eventually(within: .seconds(60)) { store.liveUpdates.lastEventID == until }
        } else {
            await offPool { _ = FileHandle.standardInput.readDataToEndOfFile() }
        }
        await store.liveUpdates.close()
        try await storage.flush()
        // Each change kept is said before the app goes: the events stream is read to the cursor.
        _ = try await eventually(within: .seconds(10)) { said.withLock { $0 } == store.liveUpdates.lastEventID }
        listening.cancel()
    }
}

/// Kills a process where it stands.
private func killProcess(_ identifier: Int32) {
    #if canImport(Glibc)
        _ = Glibc.kill(identifier, SIGKILL)
    #elseif canImport(Darwin)
        _ = Darwin.kill(identifier, SIGKILL)
    #endif
}
