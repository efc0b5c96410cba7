import BenchSupport
import Benchmark
import Foundation
import GRDB
import MonoRail
import MonoRailSQLite
import Synchronization

// The storage layer against its baselines, each pair measured in one process, alternating:
// - write-through: `Train.get()` of 10,000 records with no storage, with SQLiteStorage, and with
//   the in-memory default;
// - writing the 10,000 records that merge stored (SQLiteStorage.write) against a raw GRDB insert of
//   the same rows in one transaction;
// - a point read through `cacheOnly` of a live instance against a raw GRDB cached-statement read;
// - cold start: opening the file and answering `Train.get()` offline against decoding the same
//   list's JSON into a fresh store;
// - staleWhileRevalidate's first value against networkOnly, the server 50 ms away.
//
// The reference server runs in a process of its own: `swift build -c release --product RoundTripServer`.

@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
}

/// Keeps what the pipeline gives it: the records of one merged answer.
final class CapturingCache: RecordCache {
    private let captured = Mutex<[StoredRecord]>([])
    var records: [StoredRecord] { captured.withLock { $0 } }
    func records(_ keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] { [:] }
    func query(_ key: QueryKey) async throws -> StoredQuery? { nil }
    func write(_ records: [StoredRecord], query: StoredQuery?) async throws { captured.withLock { $0 = records } }
    func refresh(_ keys: [RecordKey], query: QueryKey?, fetched: FetchStamp) async throws {}
    func remove(_ keys: [RecordKey]) async throws {}
    func forgetDeleted(_ keys: [RecordKey]) async throws {}
    func removeAll(model: String) async throws {}
    func forgetAbsent(model: String, keeping ids: Set<String>, fetchedBefore order: Int64) async throws -> [RecordKey] {
        []
    }
    func setPinned(_ pinned: Bool, _ keys: [RecordKey]) async throws {}
    func clear() async throws {}
}

let listServer = Result { try ServerProcess.start(arguments: ["--trains", "10000"]) }
let slowServer = Result { try ServerProcess.start(arguments: ["--latency-ms", "50"]) }
let directory: URL = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-storage-bench-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}()

func configuration(_ server: ServerProcess, storage: (any RecordCache)?) -> MonoRail.Configuration {
    var configuration = MonoRail.Configuration(apiRootURL: server.baseURL, retryPolicy: .none)
    configuration.storage = storage
    return configuration
}

/// Sides in turn: each goes first as often as the others.
func order(_ count: Int, _ iteration: Int) -> [Int] {
    (0..<count).map { ($0 + iteration) % count }
}

func milliseconds(_ duration: Duration) -> Int { microseconds(duration) / 1000 }

let benchmarks: @Sendable () -> Void = {
    let clock = ContinuousClock()

    Benchmark(
        "Train.get() of 10k: no storage, SQLite write-through, in-memory, paired",
        configuration: .init(
            metrics: [
                metric("no storage (ms)"), metric("SQLite (ms)"), metric("in-memory (ms)"),
                metric("ratio SQLite/none (%)"), metric("ratio in-memory/none (%)"),
            ], warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 12)
    ) { benchmark in
        let server = try listServer.get()
        let sqlite = try SQLiteStorage(path: directory.appendingPathComponent("write-through.sqlite").path)
        for iteration in benchmark.scaledIterations {
            var times = [Duration](repeating: .zero, count: 3)
            for side in order(3, iteration) {
                let storage: (any RecordCache)? =
                    switch side {
                    case 0: nil
                    case 1: sqlite
                    default: InMemoryRecordCache()
                    }
                let store = ResourceStore(configuration: configuration(server, storage: storage))
                let start = clock.now
                blackHole(try await Train.get(in: store).count)
                times[side] = clock.now - start
            }
            benchmark.measurement(metric("no storage (ms)"), milliseconds(times[0]))
            benchmark.measurement(metric("SQLite (ms)"), milliseconds(times[1]))
            benchmark.measurement(metric("in-memory (ms)"), milliseconds(times[2]))
            benchmark.measurement(
                metric("ratio SQLite/none (%)"), microseconds(times[1]) * 100 / max(1, microseconds(times[0])))
            benchmark.measurement(
                metric("ratio in-memory/none (%)"), microseconds(times[2]) * 100 / max(1, microseconds(times[0])))
        }
    }

    Benchmark(
        "write 10k merged records in one transaction: SQLiteStorage vs raw GRDB insert, paired",
        configuration: .init(
            metrics: [metric("raw GRDB (ms)"), metric("SQLiteStorage.write (ms)"), metric("ratio storage/raw (%)")],
            warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 20)
    ) { benchmark in
        let server = try listServer.get()
        let capturing = CapturingCache()
        _ = try await Train.get(in: ResourceStore(configuration: configuration(server, storage: capturing)))
        let records = capturing.records
        precondition(records.count >= 10_000, "the merge kept \(records.count) records")
        let sqlite = try SQLiteStorage(path: directory.appendingPathComponent("write.sqlite").path, maxBytes: nil)
        let raw = try DatabasePool(path: directory.appendingPathComponent("raw.sqlite").path)
        try await raw.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS record (model TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL,
                        fetched_at REAL NOT NULL, PRIMARY KEY (model, id)) WITHOUT ROWID
                    """)
        }
        for iteration in benchmark.scaledIterations {
            var times = [Duration](repeating: .zero, count: 2)
            for side in order(2, iteration) {
                let start = clock.now
                if side == 0 {
                    try await raw.write { db in
                        let statement = try db.cachedStatement(
                            sql: "INSERT OR REPLACE INTO record (model, id, body, fetched_at) VALUES (?, ?, ?, ?)")
                        for record in records {
                            try statement.execute(arguments: [
                                record.key.model, record.key.id, record.body,
                                record.fetchedAt.timeIntervalSinceReferenceDate,
                            ])
                        }
                    }
                } else {
                    // The write returns once reads see it; the transaction is done when flush returns.
                    try await sqlite.write(records, query: nil)
                    try await sqlite.flush()
                }
                times[side] = clock.now - start
            }
            benchmark.measurement(metric("raw GRDB (ms)"), milliseconds(times[0]))
            benchmark.measurement(metric("SQLiteStorage.write (ms)"), milliseconds(times[1]))
            benchmark.measurement(
                metric("ratio storage/raw (%)"), microseconds(times[1]) * 100 / max(1, microseconds(times[0])))
        }
    }

    Benchmark(
        "point read by id through cacheOnly, live instance, vs a raw GRDB cached-statement read",
        configuration: .init(
            metrics: [metric("raw GRDB p50 (ns)"), metric("cacheOnly p50 (ns)"), metric("ratio cacheOnly/raw (%)")],
            warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 20)
    ) { benchmark in
        let server = try listServer.get()
        let path = directory.appendingPathComponent("point.sqlite").path
        let store = ResourceStore(configuration: configuration(server, storage: try SQLiteStorage(path: path)))
        let held = try await Train.get(in: store)
        let ids = held.compactMap(\.id)
        let raw = try DatabasePool(path: path)
        for _ in benchmark.scaledIterations {
            var rawTimes: [Int] = []
            var ours: [Int] = []
            for round in 0..<4000 {
                let id = ids[(round &* 7919) % ids.count]
                for side in order(2, round) {
                    let start = clock.now
                    if side == 0 {
                        let row = try raw.read { db in
                            try Row.fetchOne(
                                db.cachedStatement(
                                    sql:
                                        "SELECT body, fetched_at, etag, last_modified FROM record WHERE model = ? AND id = ?"
                                ),
                                arguments: ["train", id.description])
                        }
                        blackHole(row)
                        rawTimes.append(nanoseconds(clock.now - start))
                    } else {
                        blackHole(try await Train.get(id: id, policy: .cacheOnly, in: store))
                        ours.append(nanoseconds(clock.now - start))
                    }
                }
            }
            benchmark.measurement(metric("raw GRDB p50 (ns)"), median(rawTimes))
            benchmark.measurement(metric("cacheOnly p50 (ns)"), median(ours))
            benchmark.measurement(metric("ratio cacheOnly/raw (%)"), median(ours) * 100 / max(1, median(rawTimes)))
        }
        blackHole(held)
    }

    Benchmark(
        "cold start: open the file and get() 10k offline vs decode the same list's JSON, paired",
        configuration: .init(
            metrics: [
                metric("decode JSON (ms)"), metric("open + cacheOnly (ms)"), metric("ratio cache/JSON (%)"),
                metric("of which open (ms)"),
            ],
            warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 20)
    ) { benchmark in
        let server = try listServer.get()
        let path = directory.appendingPathComponent("cold.sqlite").path
        _ = try await Train.get(
            in: ResourceStore(configuration: configuration(server, storage: try SQLiteStorage(path: path))))
        let body = try await APIClient(baseURL: server.baseURL).send(APIRequest(method: .get, path: "/trains")).body
        var offline = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
        offline.storage = nil
        for iteration in benchmark.scaledIterations {
            var times = [Duration](repeating: .zero, count: 2)
            var opening = Duration.zero
            for side in order(2, iteration) {
                let start = clock.now
                if side == 0 {
                    blackHole(try Train.merge(listBody: body, in: ResourceStore(configuration: offline)).count)
                } else {
                    let storage = try SQLiteStorage(path: path)
                    opening = clock.now - start
                    let store = ResourceStore(configuration: offline, storage: storage)
                    blackHole(try await Train.get(policy: .cacheOnly, in: store).count)
                }
                times[side] = clock.now - start
            }
            benchmark.measurement(metric("of which open (ms)"), milliseconds(opening))
            benchmark.measurement(metric("decode JSON (ms)"), milliseconds(times[0]))
            benchmark.measurement(metric("open + cacheOnly (ms)"), milliseconds(times[1]))
            benchmark.measurement(
                metric("ratio cache/JSON (%)"), microseconds(times[1]) * 100 / max(1, microseconds(times[0])))
        }
    }

    Benchmark(
        "staleWhileRevalidate first value vs networkOnly, reference server 50 ms away",
        configuration: .init(
            metrics: [metric("networkOnly p50 (µs)"), metric("staleWhileRevalidate p50 (µs)")],
            warmupIterations: 1, maxDuration: .seconds(60), maxIterations: 5)
    ) { benchmark in
        let server = try slowServer.get()
        let store = ResourceStore(configuration: configuration(server, storage: InMemoryRecordCache()))
        let held = try await Train.get(id: 1, in: store)
        for _ in benchmark.scaledIterations {
            var network: [Int] = []
            var stale: [Int] = []
            for round in 0..<10 {
                for side in order(2, round) {
                    let start = clock.now
                    if side == 0 {
                        blackHole(try await Train.get(id: 1, policy: .networkOnly, in: store))
                        network.append(microseconds(clock.now - start))
                    } else {
                        let answer = try await Train.response(id: 1, policy: .staleWhileRevalidate, in: store)
                        stale.append(microseconds(clock.now - start))
                        // Not timed: the background request finishes before the next round.
                        try await answer.revalidation?.value
                    }
                }
            }
            benchmark.measurement(metric("networkOnly p50 (µs)"), median(network))
            benchmark.measurement(metric("staleWhileRevalidate p50 (µs)"), median(stale))
        }
        blackHole(held)
    }
}
