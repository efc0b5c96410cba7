import Foundation
import MonoRail
import MonoRailClient
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// The live-updates cursor in SQLite: kept with the records it brought, read by the next launch —
/// this test binary run again as a process of its own — which resumes the stream from it.
@Suite("Live updates across a restart", .timeLimit(.minutes(5)))
struct LiveCursorTests {
    @Test("a new process resumes the stream from the cursor kept with the records, and misses nothing")
    func resumesAfterRestart() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            let storage = try SQLiteStorage(path: path)
            var configuration = harness.store.configuration
            configuration.liveUpdates = .serverSentEvents(path: "/changes")
            let store = ResourceStore(configuration: configuration, storage: storage)
            let train = try await Train.get(id: 1, in: store)
            _ = try await Train.get(id: 2, in: store)
            try await store.liveUpdates.connect()
            let other = ResourceStore(configuration: harness.store.configuration)
            let theirs = try await Train.get(id: 1, in: other)
            theirs.company = "Seen before the restart"
            try await theirs.save()
            #expect(try await eventually { train.company == "Seen before the restart" })
            let cursor = try #require(store.liveUpdates.lastEventID)
            store.liveUpdates.disconnect()
            try await storage.flush()
            // The record came with the cursor, in the same commit.
            let key = RecordKey(model: "train", id: "1")
            let storedBody = try #require(try await storage.records([key])[key]?.body)
            #expect(try MessagePackReader().readJSON(storedBody)["company"] == "Seen before the restart")

            // While the app is not running: two more changes.
            theirs.company = "Changed while away"
            try await theirs.save()
            try await Train.get(id: 2, in: other).delete()
            harness.journal.reset()

            let (status, output) = try await RestartTests.launchAgain(
                "LiveCursorTests/resumesInNewProcess", file: path, api: harness.server.baseURL)
            #expect(status == 0, "\(output)")
            #expect(output.contains("train 1: Changed while away; train 2 deleted"), "\(output)")
            let resumed = harness.journal.requests.filter { $0.line == "GET /changes" }
            #expect(resumed.first?.lastEventID == cursor)
            // The next launch read the changes from the stream, not by reading the records again.
            #expect(!harness.journal.entries.contains { $0.hasPrefix("GET /trains") })
        }
    }

    /// The second launch of ``resumesAfterRestart()``: the records from the file, the rest from the
    /// stream.
    @Test(.enabled(if: RestartTests.secondLaunchFile != nil && RestartTests.secondLaunchAPI != nil))
    func resumesInNewProcess() async throws {
        let path = try #require(RestartTests.secondLaunchFile)
        let storage = try SQLiteStorage(path: path)
        var configuration = MonoRail.Configuration(apiRootURL: RestartTests.secondLaunchAPI)
        configuration.liveUpdates = .serverSentEvents(path: "/changes")
        let store = ResourceStore(configuration: configuration, storage: storage)
        let train = try await Train.get(id: 1, policy: .cacheOnly, in: store)
        let second = try await Train.get(id: 2, policy: .cacheOnly, in: store)
        try await store.liveUpdates.connect()
        let caughtUp = try await eventually { train.company == "Changed while away" && second.isDeleted }
        store.liveUpdates.disconnect()
        #expect(caughtUp)
        print("train 1: \(train.company ?? "nil"); train 2 \(second.isDeleted ? "deleted" : "kept")")
    }
}
