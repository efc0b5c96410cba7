import Foundation
import GRDB
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@Suite("SQLite storage: restarts, bad files, a real wipe", .timeLimit(.minutes(5)))
struct SQLiteStorageTests {
    /// Fetches trains with their cars side-loaded through a store on `path`; every instance and the
    /// store are gone when it returns.
    func fetchTrainsWithCars(server: URL, path: String) async throws -> (trainIDs: [String], companies: [String]) {
        let storage = try SQLiteStorage(path: path)
        let store = ResourceStore(configuration: .testing(apiRootURL: server), storage: storage)
        let trains = try await Seed.Train.get(where: [:], include: ["cars"], in: store)
        _ = try await Seed.Train.get(id: try #require(trains.first?.id), in: store)
        // What an app does before it quits: the last answers are on disk.
        try await storage.flush()
        return (trains.compactMap { $0.id?.description }, trains.compactMap(\.company))
    }

    @Test("restart: records, lists and their side-loaded relationships read back offline from the same file")
    func restart() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            let running = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
            let seeded = ResourceStore(configuration: .testing(apiRootURL: running.baseURL))
            let train = Seed.Train()
            train.company = "Written before the restart"
            try await train.create(in: seeded)
            for occupancy in [12, 34] {
                let car = Seed.Car()
                car.occupancy = occupancy
                car.train = train
                try await car.create(in: seeded)
            }
            let fetched = try await fetchTrainsWithCars(server: running.baseURL, path: path)
            await running.stop()

            // A new storage on the same file, and a new store: nothing in memory.
            let store = ResourceStore(
                configuration: .testing(apiRootURL: running.baseURL),
                storage: try SQLiteStorage(path: path))
            #expect(store.count == 0)
            let offline = try await Seed.Train.response(where: [:], include: ["cars"], policy: .cacheOnly, in: store)
            #expect(offline.source == .cache)
            #expect(offline.value.compactMap { $0.id?.description } == fetched.trainIDs)
            #expect(offline.value.compactMap(\.company) == fetched.companies)
            let restored = try #require(offline.value.first { $0.company == "Written before the restart" })
            // The side-loaded cars came back with their records, and the relationship resolves to them.
            #expect(restored.cars.compactMap(\.occupancy).sorted() == [12, 34])
            let carID = try #require(restored.cars.first?.id)
            let car = try await Seed.Car.get(id: carID, policy: .cacheOnly, in: store)
            #expect(car === restored.cars.first && car.train === restored)
            // networkFirst with the server gone: the cache, not the error.
            let fallback = try await Seed.Train.response(
                id: try #require(restored.id), policy: .networkFirst, in: store)
            #expect(fallback.source == .cache && fallback.value === restored)
            await #expect(throws: APIError.self) {
                try await Seed.Train.get(id: 424_242, policy: .cacheOnly, in: store)
            }
        }
    }

    @Test("an embedded record is cached as a record of its own model")
    func embeddedRecords() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withReferenceServer(schema: .trainsEmbeddedInCars) { harness in
                let train = Seed.Train()
                train.company = "Embedded"
                try await train.create(in: harness.store)
                let car = Seed.Car()
                car.occupancy = 7
                car.train = train
                try await car.create(in: harness.store)
                let trainID = try #require(train.id)
                let carID = try #require(car.id)
                do {
                    // The server embeds the train in a car it shows.
                    let storage = try SQLiteStorage(path: path)
                    let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                    let shown = try await CarEmbeddingTrain.get(id: carID, in: store)
                    #expect(shown.train?.company == "Embedded")
                    try await storage.flush()
                }
                let store = ResourceStore(
                    configuration: harness.store.configuration, storage: try SQLiteStorage(path: path))
                let requests = harness.journal.count
                let cached = try await Seed.Train.get(id: trainID, policy: .cacheOnly, in: store)
                #expect(cached.company == "Embedded")
                let cachedCar = try await CarEmbeddingTrain.get(id: carID, policy: .cacheOnly, in: store)
                #expect(cachedCar.occupancy == 7 && cachedCar.train === cached)
                #expect(harness.journal.count == requests)
            }
        }
    }

    @Test("the file is the owner's only, in a directory made for it")
    func permissions() async throws {
        try await withTemporaryDirectory { directory in
            let folder = directory.appendingPathComponent("Caches/MonoRail")
            let path = folder.appendingPathComponent("app.sqlite").path
            let storage = try SQLiteStorage(path: path)
            try await storage.write(
                [StoredRecord(key: RecordKey(model: "train", id: "1"), body: Data([0x80]), fetchedAt: Date())],
                query: nil)
            try await storage.flush()
            func mode(_ path: String) throws -> Int {
                try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)
                    .intValue
            }
            #expect(try mode(path) == 0o600)
            #expect(try mode(folder.path) == 0o700)
            if FileManager.default.fileExists(atPath: path + "-wal") { #expect(try mode(path + "-wal") == 0o600) }
        }
    }

    // MARK: - Bad files

    enum BadFile: String, CaseIterable, Sendable {
        case truncated, damaged, randomBytes, foreign, newerSchema
    }

    /// Writes the bad file at `path`.
    func make(_ kind: BadFile, at path: String) async throws {
        switch kind {
        case .truncated, .damaged:
            do {
                let storage = try SQLiteStorage(path: path)
                let records = (0..<2000).map {
                    StoredRecord(
                        key: RecordKey(model: "train", id: String($0)), body: Data(repeating: 0x90, count: 200),
                        fetchedAt: Date())
                }
                try await storage.write(records, query: nil)
                try await storage.flush()
            }
            // As a killed session leaves it: marked open, so the next open reads every page.
            try Self.markSessionOpen(path)
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(data.count > 100_000)
            if kind == .truncated {
                data = data.prefix(data.count / 2)
            } else {
                // Garbage over pages of records, the header and schema intact.
                let start = data.count / 2
                data.replaceSubrange(start..<start + 8192, with: (0..<8192).map { _ in UInt8.random(in: 0...255) })
            }
            try data.write(to: URL(fileURLWithPath: path))
        case .randomBytes:
            try Data((0..<65_536).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: path))
        case .foreign:
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes VALUES (1, 'mine')")
            }
            try queue.close()
        case .newerSchema:
            _ = try SQLiteStorage(path: path)
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99-from-the-future')")
            }
            try queue.close()
        }
    }

    /// Marks the file as a session that wrote and was killed leaves it.
    static func markSessionOpen(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE total SET session_open = 1") }
        try queue.close()
    }

    /// The file's session mark, read as the next open reads it.
    static func sessionOpen(_ path: String) throws -> Int? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try Int.fetchOne(db, sql: "SELECT session_open FROM total") }
    }

    @Test("a file its last session closed opens without reading every page; a damaged page met later is unreadable")
    func closedCleanly() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            let keys = (0..<2000).map { RecordKey(model: "train", id: String($0)) }
            do {
                let storage = try SQLiteStorage(path: path)
                try await storage.write(
                    keys.map { StoredRecord(key: $0, body: Data(repeating: 0x90, count: 200), fetchedAt: Date()) },
                    query: nil)
                try await storage.flush()
                // A session that wrote is open until the process's way out closes it.
                #expect(try Self.sessionOpen(path) == 1)
                storage.commitNow()  // what the process's way out does
            }
            #expect(try Self.sessionOpen(path) == 0)
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            let start = data.count / 2
            data.replaceSubrange(start..<start + 8192, with: [UInt8](repeating: 0xA5, count: 8192))
            try data.write(to: URL(fileURLWithPath: path))

            // Not read whole at open: the damage is met by the read that reaches it.
            let storage = try SQLiteStorage(path: path)
            let error = await #expect(throws: SQLiteStorageError.self) { _ = try await storage.records(keys) }
            #expect(error?.code == .unreadable, "\(String(describing: error))")
        }
    }

    static func expectedCode(_ kind: BadFile) -> SQLiteStorageError.Code {
        switch kind {
        case .truncated, .damaged, .randomBytes: .unreadable
        case .foreign: .foreign
        case .newerSchema: .newerSchema
        }
    }

    @Test("a file whose creation was killed before the first migration opens as a new one")
    func interruptedCreation() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            // What GRDB's migrator leaves when the process dies between making its table and
            // committing the first migration (found by the outbox crash harness).
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            }
            try queue.close()
            let storage = try SQLiteStorage(path: path)
            try await storage.enqueue(
                PendingWrite(
                    sequence: 1, idempotencyKey: "k", model: "train", verb: .destroy, id: 1, body: nil, fields: []))
            #expect(try storage.pendingWrites().map(\.idempotencyKey) == ["k"])
        }
    }

    @Test("a write's batch, the key of the atomic request it went out in, is kept and read back")
    func batchKept() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            var write = PendingWrite(
                sequence: 1, idempotencyKey: "k1", model: "train", verb: .create, id: .local(),
                body: ["data": ["type": "trains"]], fields: [])
            do {
                let storage = try SQLiteStorage(path: path)
                try await storage.enqueue(write)
                #expect(try storage.pendingWrites().first?.batch == nil)
                write.batch = "k1"
                write.attempts = 1
                try await storage.settle(removing: [], updating: [write])
            }
            let reopened = try SQLiteStorage(path: path)
            #expect(try reopened.pendingWrites().first?.batch == "k1")
            #expect(try reopened.pendingWrites().first == write)
        }
    }

    @Test("a bad file is a typed error and stays byte for byte as it was", arguments: BadFile.allCases)
    func badFile(_ kind: BadFile) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            try await make(kind, at: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let error = #expect(throws: SQLiteStorageError.self) { try SQLiteStorage(path: path) }
            #expect(error?.code == Self.expectedCode(kind), "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            // Opening again refuses it again: nothing was half-done to it.
            #expect(throws: SQLiteStorageError.self) { try SQLiteStorage(path: path) }
        }
    }

    @Test("the documented recovery moves the bad file aside, intact, and starts empty", arguments: BadFile.allCases)
    func recovery(_ kind: BadFile) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            try await make(kind, at: path)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let storage = try SQLiteStorage(path: path, recovery: .moveAside)
            let moved = try #require(storage.movedAsidePath)
            #expect(moved.hasPrefix(path + ".unreadable-"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == before)
            #expect(try await storage.count == 0)
            let key = RecordKey(model: "train", id: "1")
            try await storage.write([StoredRecord(key: key, body: Data([0x80]), fetchedAt: Date())], query: nil)
            #expect(try await storage.records([key])[key]?.body == Data([0x80]))
        }
    }

    @Test("a good file opens as it is: nothing moved, records kept")
    func goodFile() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            let key = RecordKey(model: "train", id: "1")
            do {
                let storage = try SQLiteStorage(path: path)
                try await storage.write([StoredRecord(key: key, body: Data([0x80]), fetchedAt: Date())], query: nil)
                try await storage.flush()
            }
            let storage = try SQLiteStorage(path: path, recovery: .moveAside)
            #expect(storage.movedAsidePath == nil)
            #expect(try await storage.records([key])[key] != nil)
        }
    }

    @Test("the highest order written is kept as it rises, and found in a file of the schema before it")
    func highestOrder() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            let record = { (id: String, order: Int64) in
                StoredRecord(
                    key: RecordKey(model: "train", id: id), body: Data([0x80]), fetchedAt: Date(), order: order)
            }
            do {
                let storage = try SQLiteStorage(path: path)
                #expect(storage.highestOrder == 0)
                try await storage.write([record("1", 40), record("2", 12)], query: nil)
                try await storage.refresh(
                    [RecordKey(model: "train", id: "2")], query: nil, fetched: FetchStamp(order: 57, date: Date()))
                try await storage.flush()
            }
            #expect(try SQLiteStorage(path: path).highestOrder == 57)
            do {
                // Forgetting records does not lower it: a later launch's requests stay after every earlier one's.
                let storage = try SQLiteStorage(path: path)
                try await storage.remove([RecordKey(model: "train", id: "2")])
                try await storage.flush()
            }
            #expect(try SQLiteStorage(path: path).highestOrder == 57)
            // The file as the schema before kept it: no stored high-water mark, only the rows' orders.
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql:
                        "ALTER TABLE total DROP COLUMN fetch_order; DELETE FROM grdb_migrations WHERE identifier = 'v6'"
                )
            }
            try queue.close()
            #expect(try SQLiteStorage(path: path).highestOrder == 40)
        }
    }

    // MARK: - Clear

    /// Every file of the database: the file, its log, and its index.
    func databaseBytes(_ path: String) throws -> Data {
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            bytes += try Data(contentsOf: URL(fileURLWithPath: path + suffix))
        }
        return bytes
    }

    @Test("clear() leaves no record bytes in the file, its write-ahead log, or the file cache")
    func clear() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            let marker = "Sign-out-marker-\(UUID().uuidString)"
            try await withReferenceServer(schema: .trains) { harness in
                let fileCache = try FileCache(directory: directory.appendingPathComponent("files"), maxBytes: 1 << 20)
                var configuration = harness.store.configuration
                configuration.fileCache = fileCache
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: configuration, storage: storage)
                for index in 0..<50 {
                    let train = Train()
                    train.company = "\(marker) \(index)"
                    try await train.create(in: store)
                }
                let trains = try await Train.get(in: store)
                #expect(trains.count >= 50)
                try fileCache.store(Data(marker.utf8), for: URL(string: "https://example.com/avatar")!)
                try await storage.flush()
                #expect(try databaseBytes(path).range(of: Data(marker.utf8)) != nil)

                try await store.clear()
                #expect(store.count == 0)
                #expect(try databaseBytes(path).range(of: Data(marker.utf8)) == nil)
                let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?
                    .intValue
                #expect(walSize == nil || walSize == 0)
                #expect(fileCache.count == 0)
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: fileCache.directory.path)
                    .filter { $0 != "index.json" }
                #expect(leftovers.isEmpty)
                let index = try String(
                    contentsOf: fileCache.directory.appendingPathComponent("index.json"), encoding: .utf8)
                #expect(!index.contains("avatar"))
                // The store works on: the next read asks the server and keeps the answer again.
                await #expect(throws: APIError.self) { try await Train.get(policy: .cacheOnly, in: store) }
                let again = try await Train.get(in: store)
                #expect(again.count == trains.count)
                #expect(again.first !== trains.first)
            }
        }
    }
}
