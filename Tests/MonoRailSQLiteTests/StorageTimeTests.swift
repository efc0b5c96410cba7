import Foundation
import GRDB
import MonoRail
import MonoRailClient
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// What a restart finds: storage keeps what memory keeps, what a read stored is on disk when the
/// process ends, a kept save replays the body it was kept with, and an unreadable kept write is set
/// aside. Each second launch is this test binary run again as a process of its own.
@Suite("Storage across restarts: merged records, commits on quit, kept bodies", .timeLimit(.minutes(5)))
struct StorageTimeTests {
    static var secondLaunchFile: String? { RestartTests.secondLaunchFile }
    static var secondLaunchAPI: URL? { RestartTests.secondLaunchAPI }

    static func launchAgain(_ test: String, file: String, api: URL? = nil) async throws -> (Int32, String) {
        try await RestartTests.launchAgain("StorageTimeTests/\(test)", file: file, api: api)
    }

    @Test("a lighter index read after a show does not erase the embedded cars and conductor on disk")
    func lighterIndexKeepsEmbedded() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            let storage = try SQLiteStorage(path: path)
            let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
            let train = try await Spec.Train.get(id: 1, policy: .networkFirst, in: store)
            #expect(train.cars.count == 2 && train.conductor != nil)
            // The index renders trains without what the show embeds.
            let trains = try await Spec.Train.get(policy: .networkFirst, in: store)
            #expect(trains.count >= 2)
            #expect(train.cars.count == 2 && train.conductor != nil, "in memory, absent means unchanged")
            try await storage.flush()
            let (status, output) = try await RestartTests.launchAgain("readsRelationshipsOffline", file: path)
            #expect(status == 0, "\(output)")
            #expect(output.contains("cars [40, 12], conductor Bill"), "\(output)")
        }
    }

    /// How many launch pairs: 3 in `swift test`; `MONORAIL_README_OFFLINE_RUNS=100` for a measurement.
    static let launchPairs = ProcessInfo.processInfo.environment["MONORAIL_README_OFFLINE_RUNS"].flatMap(Int.init) ?? 3

    @Test("what a networkFirst read stored is read cacheOnly by the next process, with no flush() called")
    func readsCommittedOnQuit() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            for run in 1...max(1, Self.launchPairs) {
                let (online, first) = try await Self.launchAgain("readsOnline", file: path, api: harness.server.baseURL)
                #expect(online == 0, "\(first)")
                let (offline, second) = try await Self.launchAgain("readsCacheOnly", file: path)
                #expect(offline == 0, "run \(run): \(second)")
                #expect(second.contains("cached train 2: Deutsche Bahn AG"), "run \(run): \(second)")
                #expect(second.contains("offline list: MonoRail Co., Deutsche Bahn AG"), "run \(run): \(second)")
                try FileManager.default.removeItem(atPath: path)
                for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        }
    }

    /// A launch that reads train 2 online, as the README's example, and quits without `flush()`.
    @Test(.enabled(if: secondLaunchFile != nil && secondLaunchAPI != nil))
    func readsOnline() async throws {
        let storage = try SQLiteStorage(path: try #require(Self.secondLaunchFile))
        MonoRail.configure {
            $0.apiRootURL = Self.secondLaunchAPI
            $0.storage = storage
            $0.cachePolicy = .networkFirst
        }
        let train = try await Spec.Train.get(id: 2)
        print("read train 2: \(train.company ?? "nil")")
        print("listed \(try await Spec.Train.get().count)")
    }

    /// A launch with the server gone, reading what the last one stored.
    @Test(.enabled(if: secondLaunchFile != nil && secondLaunchAPI == nil))
    func readsCacheOnly() async throws {
        let storage = try SQLiteStorage(path: try #require(Self.secondLaunchFile))
        MonoRail.configure {
            $0.apiRootURL = URL(string: "http://127.0.0.1:1")
            $0.storage = storage
            $0.cachePolicy = .networkFirst
        }
        let train = try await Spec.Train.get(id: 2, policy: .cacheOnly)
        print("cached train 2: \(train.company ?? "nil")")
        // The README's promise: with the two storage lines, `Train.get()` answers with no server.
        let all = try await Spec.Train.get()
        print("offline list: \(all.map { $0.company ?? "nil" }.joined(separator: ", "))")
    }

    /// A store keeping its writes in the file at `path`, with train 1 saved as `company` and kept
    /// unsent (the outbox paused).
    static func keptSave(_ company: String, harness: TestAPI, path: String) async throws
        -> (ResourceStore, SQLiteStorage, Spec.Train)
    {
        let storage = try SQLiteStorage(path: path)
        var configuration = harness.store.configuration
        configuration.writePolicy = .queued
        let store = ResourceStore(configuration: configuration, storage: storage)
        let train = try await Spec.Train.get(id: 1, in: store)
        await store.outbox.pause()
        train.company = company
        try await train.save()
        return (store, storage, train)
    }

    @Test("a kept save replayed after a restart, its record gone from the cache, sends what it was kept with")
    func keptSaveAfterRestart() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            let before = try #require(try harness.server.store.find("trains", id: "1"))
            let (store, storage, train) = try await Self.keptSave("Kept Co.", harness: harness, path: path)
            // The record leaves the cache, as a 204 answer, a time to live or an eviction takes it.
            try await store.unload(train)
            try await storage.flush()

            let (status, output) = try await Self.launchAgain(
                "sendsKeptSave", file: path, api: harness.server.baseURL)
            #expect(status == 0, "\(output)")
            #expect(output.contains("pending 0"), "\(output)")
            let after = try #require(try harness.server.store.find("trains", id: "1"))
            #expect(after["company"] == "Kept Co.")
            for key in ["number_of_cars", "max_speed", "built_at"] {
                #expect(after[key] == before[key], "\(key) was not written over")
            }
        }
    }

    /// The second launch of ``keptSaveAfterRestart()``: the kept write goes before any model is used.
    @Test(.enabled(if: secondLaunchFile != nil && secondLaunchAPI != nil))
    func sendsKeptSave() async throws {
        let storage = try SQLiteStorage(path: try #require(Self.secondLaunchFile))
        MonoRail.configure {
            $0.apiRootURL = Self.secondLaunchAPI
            $0.storage = storage
            $0.writePolicy = .queued
        }
        try await ResourceStore.default.outbox.flush()
        print("pending \(ResourceStore.default.outbox.pendingCount)")
    }

    @Test("an outbox row that cannot be read is parked with why; the other writes flow; it can only be discarded")
    func unreadableOutboxRow() async throws {
        try await RestartTests.withServerAndFile { harness, path in
            let (store, storage, _) = try await Self.keptSave("Still Sent", harness: harness, path: path)
            let configuration = store.configuration
            try await storage.flush()
            // A later version's verb, and a body that is not JSON: what a damaged file holds.
            let database = try DatabaseQueue(path: path)
            try await database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO outbox (sequence, idempotency_key, model, verb, id, id_is_text, body, fields,
                            waits_for_if_match, created_at, attempts)
                        VALUES (100, 'k-100', 'train', 'frobnicate', '2', 0, NULL, '[]', 0, 0, 0),
                               (101, 'k-101', 'train', 'update', '2', 0, '{not json', '[]', 0, 0, 0)
                        """)
            }
            try database.close()

            let restarted = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
            try await restarted.outbox.flush()
            #expect(try harness.server.store.find("trains", id: "1")?["company"] == "Still Sent")
            let parked = restarted.outbox.parked
            #expect(parked.map(\.sequence) == [100, 101])
            #expect(parked.first?.parking?.message.contains("unknown verb \"frobnicate\"") == true)
            #expect(parked.last?.parking?.message.contains("body is not JSON") == true)
            let first = try #require(parked.first)
            await #expect(throws: APIError.self) { try await restarted.outbox.retry(first) }
            for write in parked { try await restarted.outbox.discard(write) }
            #expect(restarted.outbox.parked.isEmpty && restarted.outbox.pendingCount == 0)
            #expect(try SQLiteStorage(path: path).pendingWrites().isEmpty)
        }
    }
}
