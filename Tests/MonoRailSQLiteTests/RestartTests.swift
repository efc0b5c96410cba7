import Foundation
import MonoRail
import MonoRailClient
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// What an app finds in its SQLite file after a restart, with the server gone: the second launch is
/// this test binary run again as a process of its own, so nothing of the first is in memory.
@Suite("After a restart", .timeLimit(.minutes(5)))
struct RestartTests {
    /// Set for the second launch: the SQLite file the first one left.
    static let secondLaunchFile = ProcessInfo.processInfo.environment["MONORAIL_RESTART_FILE"]

    /// Set for the second launch of a test that needs the server back: its API root.
    static let secondLaunchAPI = ProcessInfo.processInfo.environment["MONORAIL_RESTART_API"].flatMap(URL.init(string:))

    /// Runs a first launch: `body` gets the reference server and the path of a new SQLite file, which
    /// a second launch (``launchAgain(_:file:api:)``) reads.
    static func withServerAndFile(_ body: (TestAPI, String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withReferenceServer(schema: .trains) { harness in try await body(harness, path) }
        }
    }

    /// Runs one test of this binary in a new process; its exit status and output.
    static func launchAgain(_ test: String, file: String, api: URL? = nil) async throws
        -> (status: Int32, output: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        // A bare name is one of this suite's; another suite's test is named with its suite.
        let filter = test.contains("/") ? test : "RestartTests/\(test)"
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        var environment = ["MONORAIL_RESTART_FILE": file]
        if let api { environment["MONORAIL_RESTART_API"] = api.absoluteString }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }

    @Test("a new process reading with cacheOnly gets train.cars and train.conductor as the online read had them")
    func embeddedRelationshipsFromDisk() async throws {
        try await Self.withServerAndFile { harness, path in
            let storage = try SQLiteStorage(path: path)
            let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
            let train = try await Spec.Train.get(id: 1, in: store)
            #expect(train.cars.map(\.occupancy) == [40, 12] && train.conductor?.name == "Bill")
            try await storage.flush()
            let (status, output) = try await Self.launchAgain("readsRelationshipsOffline", file: path)
            #expect(status == 0, "\(output)")
            #expect(output.contains("cars [40, 12], conductor Bill"), "\(output)")
        }
    }

    /// The second launch of ``embeddedRelationshipsFromDisk()``.
    @Test(.enabled(if: secondLaunchFile != nil))
    func readsRelationshipsOffline() async throws {
        let path = try #require(Self.secondLaunchFile)
        // As an app starts: the default store, configured once.
        let storage = try SQLiteStorage(path: path)
        MonoRail.configure {
            $0.apiRootURL = URL(string: "http://127.0.0.1:1")
            $0.storage = storage
        }
        let train = try await Spec.Train.get(id: 1, policy: .cacheOnly)
        #expect(train.company == "MonoRail Co.")
        #expect(train.cars.allSatisfy { $0.train === train })
        let cars = train.cars.map { $0.occupancy.map(String.init) ?? "nil" }.joined(separator: ", ")
        print("cars [\(cars)], conductor \(train.conductor?.name ?? "nil")")
    }

    @Test("writes kept with the server down are counted and sent by a new process before it uses any model")
    func keptWritesSentAtLaunch() async throws {
        try await Self.withServerAndFile { harness, path in
            let storage = try SQLiteStorage(path: path)
            // Online once, so the record is on disk; then the server is out of reach.
            let online = ResourceStore(configuration: harness.store.configuration, storage: storage)
            _ = try await Spec.Train.get(id: 1, in: online)
            var offline = harness.store.configuration
            offline.apiRootURL = URL(string: "http://127.0.0.1:1")
            offline.writePolicy = .queuedWhenOffline
            let store = ResourceStore(configuration: offline, storage: storage)
            let train = try await Spec.Train.get(id: 1, policy: .cacheOnly, in: store)
            train.company = "Kept Co."
            try await train.save()
            let made = Spec.Train()
            made.company = "Made Offline"
            try await made.create(in: store)
            #expect(store.outbox.pendingCount == 2)
            await store.outbox.pause()
            try await storage.flush()

            let (status, output) = try await Self.launchAgain(
                "sendsKeptWritesAtLaunch", file: path, api: harness.server.baseURL)
            #expect(status == 0, "\(output)")
            #expect(output.contains("kept 2 before any model, 0 after flush"), "\(output)")
            let trains = try await Spec.Train.get(in: harness.store)
            #expect(trains.first { $0.id == 1 }?.company == "Kept Co.")
            #expect(trains.count { $0.company == "Made Offline" } == 1)
        }
    }

    /// The second launch of ``keptWritesSentAtLaunch()``: as SPEC §6 shows it, no model used first.
    @Test(.enabled(if: secondLaunchFile != nil && secondLaunchAPI != nil))
    func sendsKeptWritesAtLaunch() async throws {
        let path = try #require(Self.secondLaunchFile)
        let storage = try SQLiteStorage(path: path)
        MonoRail.configure {
            $0.apiRootURL = Self.secondLaunchAPI
            $0.storage = storage
        }
        try await ResourceStore.default.outbox.load()
        let kept = ResourceStore.default.outbox.pendingCount
        try await ResourceStore.default.outbox.flush()
        print("kept \(kept) before any model, \(ResourceStore.default.outbox.pendingCount) after flush")
        // The answers are in storage for when the app reads the model: train 1 as the server has it.
        // Committed first: until then the cache holds a JSON answer as its text.
        try await storage.flush()
        let key = RecordKey(model: "train", id: "1")
        let stored = try #require(try await storage.records([key])[key])
        #expect(try MessagePackReader().readJSON(stored.body).objectValue?["company"] == "Kept Co.")
    }
}
