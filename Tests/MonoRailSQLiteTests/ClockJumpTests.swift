import Foundation
import MonoRail
import MonoRailClient
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import MonoRailTransport
import TestModels
import TestServer
import Testing

/// A device clock set back — by hand, or by a bad NTP step — between two reads: the second answer
/// is still the newer one, in memory and in the SQLite file, in the same launch and in the next.
@Suite("A clock set back", .timeLimit(.minutes(5)))
struct ClockJumpTests {
    static let dayBack: TimeInterval = -86_400

    /// The company the SQLite file keeps for train 1.
    static func storedCompany(in storage: SQLiteStorage) async throws -> JSONValue? {
        let key = RecordKey(model: "train", id: "1")
        let record = try #require(try await storage.records([key])[key])
        return try MessagePackReader().readJSON(record.body).objectValue?["company"]
    }

    /// Changes train 1's company on the server, through a store of its own.
    static func rename(to company: String, on harness: TestAPI) async throws {
        let train = try await Spec.Train.get(id: 1, in: harness.store)
        train.company = company
        try await train.save()
    }

    @Test("a read sent after the clock stepped back a day is merged and stored over the one before")
    func sameLaunch() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            let now = Locked(Date())
            var configuration = harness.store.configuration
            configuration.wallClock = { now.withLock { $0 } }
            let storage = try SQLiteStorage(path: path)
            let store = ResourceStore(configuration: configuration, storage: storage)
            let train = try await Spec.Train.get(id: 1, in: store)
            #expect(train.company == "MonoRail Co.")
            let firstRead = try #require(train.fetchedAt)

            try await Self.rename(to: "Read After The Jump", on: harness)
            now.withLock { $0 = $0.addingTimeInterval(Self.dayBack) }
            let again = try await Spec.Train.get(id: 1, in: store)
            #expect(again === train)
            #expect(train.company == "Read After The Jump")
            // fetchedAt stays the wall clock's, for display.
            #expect(train.fetchedAt == firstRead.addingTimeInterval(Self.dayBack))
            try await storage.flush()
            #expect(try await Self.storedCompany(in: storage) == "Read After The Jump")

            // A list read after it, with the clock back further still, is newer than both.
            try await Self.rename(to: "Listed Later", on: harness)
            now.withLock { $0 = $0.addingTimeInterval(Self.dayBack) }
            _ = try await Spec.Train.get(in: store)
            #expect(train.company == "Listed Later")
            try await storage.flush()
            #expect(try await Self.storedCompany(in: SQLiteStorage(path: path)) == "Listed Later")
        }
    }

    @Test("a new launch with its clock a day behind the file's reads merges and stores what it fetches")
    func nextLaunch() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            let storage = try SQLiteStorage(path: path)
            let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
            _ = try await Spec.Train.get(id: 1, in: store)
            try await storage.flush()
            try await Self.rename(to: "Read By The Next Launch", on: harness)

            let (status, output) = try await RestartTests.launchAgain(
                "ClockJumpTests/readsWithClockBack", file: path, api: harness.server.baseURL)
            #expect(status == 0, "\(output)")
            #expect(output.contains("cached MonoRail Co., fetched Read By The Next Launch"), "\(output)")
            #expect(try await Self.storedCompany(in: SQLiteStorage(path: path)) == "Read By The Next Launch")
        }
    }

    /// The second launch of ``nextLaunch()``: its clock is a day behind the one that filled the file.
    @Test(.enabled(if: RestartTests.secondLaunchFile != nil && RestartTests.secondLaunchAPI != nil))
    func readsWithClockBack() async throws {
        let path = try #require(RestartTests.secondLaunchFile)
        let storage = try SQLiteStorage(path: path)
        MonoRail.configure {
            $0.apiRootURL = RestartTests.secondLaunchAPI
            $0.storage = storage
            $0.wallClock = { Date().addingTimeInterval(Self.dayBack) }
        }
        let train = try await Spec.Train.get(id: 1, policy: .cacheOnly)
        let cached = train.company ?? "nil"
        _ = try await Spec.Train.get(id: 1, policy: .networkOnly)
        try await storage.flush()
        print("cached \(cached), fetched \(train.company ?? "nil")")
    }
}
