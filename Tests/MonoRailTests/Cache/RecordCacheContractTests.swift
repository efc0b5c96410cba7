import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailTesting
import Testing

/// What every record cache promises, checked on the in-memory one and on SQLite files.
@Suite("Record caches: the contract both implementations keep", .timeLimit(.minutes(5)))
struct RecordCacheContractTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory, sqlite
    }

    /// A cache of `kind` bounded at `maxBytes`, in a directory removed afterwards.
    func withCache(_ kind: Kind, maxBytes: Int = 1 << 20, _ body: (any RecordCache) async throws -> Void)
        async throws
    {
        switch kind {
        case .memory:
            try await body(InMemoryRecordCache(maxBytes: maxBytes))
        case .sqlite:
            try await withTemporaryDirectory { directory in
                try await body(
                    try SQLiteStorage(path: directory.appendingPathComponent("cache.sqlite").path, maxBytes: maxBytes))
            }
        }
    }

    static func record(
        _ id: Int, _ body: String = "x", at fetchedAt: Date = Date(), order: Int64 = 1, etag: String? = nil
    ) -> StoredRecord {
        StoredRecord(
            key: RecordKey(model: "train", id: String(id)), body: Data(body.utf8), fetchedAt: fetchedAt, order: order,
            etag: etag, lastModified: etag.map { _ in "Tue, 24 Nov 2026 00:00:00 GMT" })
    }

    static func keys(_ ids: some Sequence<Int>) -> [RecordKey] {
        ids.map { RecordKey(model: "train", id: String($0)) }
    }

    @Test("records and queries read back as written, validators included", arguments: Kind.allCases)
    func roundTrip(_ kind: Kind) async throws {
        try await withCache(kind) { cache in
            let fetchedAt = Date(timeIntervalSince1970: 1_790_000_000.25)
            let query = StoredQuery(
                key: QueryKey(model: "train", key: "/trains?{\"company\":\"A\"}"), ids: ["2", "1"],
                related: [RecordKey(model: "car", id: "7")], fetchedAt: fetchedAt, order: 7, etag: "\"list\"",
                lastModified: "Mon, 23 Nov 2026 10:00:00 GMT")
            try await cache.write(
                [Self.record(1, "one", at: fetchedAt, etag: "\"1\""), Self.record(2, "two", at: fetchedAt, order: 9)],
                query: query)
            let found = try await cache.records(Self.keys([1, 2, 3]))
            #expect(found.count == 2)
            #expect(found[RecordKey(model: "train", id: "1")]?.body == Data("one".utf8))
            #expect(found[RecordKey(model: "train", id: "1")]?.etag == "\"1\"")
            #expect(found[RecordKey(model: "train", id: "1")]?.lastModified == "Tue, 24 Nov 2026 00:00:00 GMT")
            #expect(found[RecordKey(model: "train", id: "2")]?.fetched == FetchStamp(order: 9, date: fetchedAt))
            #expect(try await cache.query(query.key) == query)
            #expect(try await cache.query(QueryKey(model: "train", key: "/trains")) == nil)
        }
    }

    @Test(
        "a record fetched earlier never replaces one fetched later, by the order of requests and not the clock",
        arguments: Kind.allCases)
    func newerWins(_ kind: Kind) async throws {
        try await withCache(kind) { cache in
            let now = Date()
            let dayBefore = now.addingTimeInterval(-86_400)
            try await cache.write([Self.record(1, "newer", at: now, order: 2)], query: nil)
            // Sent before it, though the clock read later then.
            try await cache.write([Self.record(1, "older", at: now.addingTimeInterval(5), order: 1)], query: nil)
            let key = RecordKey(model: "train", id: "1")
            #expect(try await cache.records([key])[key]?.body == Data("newer".utf8))
            // Sent after it, with the clock set back a day.
            try await cache.write([Self.record(1, "newest", at: dayBefore, order: 3)], query: nil)
            try await cache.flush()
            #expect(try await cache.records([key])[key]?.body == Data("newest".utf8))
            // A refresh only moves forward.
            try await cache.refresh([key], query: nil, fetched: FetchStamp(order: 2, date: now))
            #expect(try await cache.records([key])[key]?.fetched == FetchStamp(order: 3, date: dayBefore))
            let confirmed = FetchStamp(order: 4, date: dayBefore.addingTimeInterval(-60))
            try await cache.refresh([key], query: nil, fetched: confirmed)
            #expect(try await cache.records([key])[key]?.fetched == confirmed)
        }
    }

    @Test(
        "records(inOrderOf:) answers in the keys' order, nil where none is kept: many or few, written or committed",
        arguments: Kind.allCases)
    func inOrder(_ kind: Kind) async throws {
        try await withCache(kind) { cache in
            try await cache.write((1...40).map { Self.record($0, "train \($0)", order: Int64($0)) }, query: nil)
            try await cache.flush()
            // Not yet committed on SQLite when read: those come from the queue, the others from the file.
            try await cache.write([Self.record(41, "train 41", order: 41)], query: nil)
            try await cache.write(
                [StoredRecord(key: RecordKey(model: "car", id: "3"), body: Data("car 3".utf8), fetchedAt: Date())],
                query: nil)
            let many =
                Self.keys([41, 7, 99, 1, 40]) + [RecordKey(model: "car", id: "3")] + Self.keys((2...30).reversed())
            let found = try await cache.records(inOrderOf: many)
            #expect(found.count == many.count)
            for (key, record) in zip(many, found) {
                let kept = key.model == "car" || Int(key.id).map { $0 <= 41 } == true
                #expect((record == nil) == !kept, "\(key)")
                #expect(record.map(\.key) == (kept ? key : nil))
                if let record {
                    #expect(record.body == Data("\(key.model) \(key.id)".utf8), "\(key)")
                }
            }
            #expect(try await cache.records(inOrderOf: Self.keys([5, 100, 3])).map { $0?.order } == [5, nil, 3])
            #expect(try await cache.records(inOrderOf: []).isEmpty)
        }
    }

    @Test("remove, removeAll(model:) and clear forget what they say", arguments: Kind.allCases)
    func forgetting(_ kind: Kind) async throws {
        try await withCache(kind) { cache in
            let car = StoredRecord(key: RecordKey(model: "car", id: "1"), body: Data("car".utf8), fetchedAt: Date())
            let query = StoredQuery(key: QueryKey(model: "train", key: "/trains"), ids: ["1", "2"], fetchedAt: Date())
            try await cache.write([Self.record(1), Self.record(2), car], query: query)
            try await cache.remove(Self.keys([1]))
            #expect(try await cache.records(Self.keys([1, 2])).keys.map(\.id) == ["2"])
            try await cache.removeAll(model: "train")
            #expect(try await cache.records(Self.keys([2])).isEmpty)
            #expect(try await cache.query(query.key) == nil)
            #expect(try await cache.records([car.key]).count == 1)
            try await cache.clear()
            #expect(try await cache.records([car.key]).isEmpty)
        }
    }

    @Test("a record the server deleted leaves the queries that listed it, which still answer", arguments: Kind.allCases)
    func deleted(_ kind: Kind) async throws {
        try await withCache(kind) { cache in
            let query = StoredQuery(
                key: QueryKey(model: "train", key: "/trains"), ids: ["1", "2", "3"], fetchedAt: Date(), etag: "\"e\"")
            try await cache.write([Self.record(1), Self.record(2), Self.record(3)], query: query)
            try await cache.forgetDeleted(Self.keys([2]))
            #expect(try await cache.records(Self.keys([2])).isEmpty)
            let kept = try #require(try await cache.query(query.key))
            #expect(kept.ids == ["1", "3"])
            #expect(kept.fetchedAt == query.fetchedAt && kept.etag == query.etag)
        }
    }

    @Test(
        "forgetAbsent forgets the model's records an authoritative list lacks, fetched before it",
        arguments: Kind.allCases)
    func absent(_ kind: Kind) async throws {
        try await withCache(kind) { cache in
            // Record 3 was fetched after the list was asked for, though the clock read earlier then.
            let now = Date()
            let query = StoredQuery(
                key: QueryKey(model: "train", key: "/trains?company=A"), ids: ["1", "2"], fetchedAt: now, order: 5)
            let car = StoredRecord(
                key: RecordKey(model: "car", id: "2"), body: Data("x".utf8), fetchedAt: now, order: 5)
            try await cache.write(
                [
                    Self.record(1, at: now, order: 5), Self.record(2, at: now, order: 5),
                    Self.record(3, at: now.addingTimeInterval(-86_400), order: 15), car,
                ], query: query)
            let forgotten = try await cache.forgetAbsent(model: "train", keeping: ["1"], fetchedBefore: 10)
            #expect(forgotten == Self.keys([2]))
            #expect(try await cache.records(Self.keys([1, 2, 3])).keys.sorted { $0.id < $1.id } == Self.keys([1, 3]))
            #expect(try await cache.records([car.key]).count == 1)
            #expect(try await cache.query(query.key)?.ids == ["1"])
        }
    }

    @Test("past the bound, least recently used records go first, and pinned ones stay", arguments: Kind.allCases)
    func eviction(_ kind: Kind) async throws {
        let body = String(repeating: "r", count: 400)
        try await withCache(kind, maxBytes: 20_000) { cache in
            for id in 0..<30 { try await cache.write([Self.record(id, body)], query: nil) }
            try await cache.flush()
            try await cache.setPinned(true, Self.keys([0]))
            // Read record 1: it is now more recent than 2…29.
            _ = try await cache.records(Self.keys([1]))
            for id in 30..<60 { try await cache.write([Self.record(id, body)], query: nil) }
            try await cache.flush()
            let kept = try await cache.records(Self.keys(0..<60))
            #expect(kept.count < 60)
            #expect(kept[RecordKey(model: "train", id: "0")] != nil, "pinned")
            #expect(kept[RecordKey(model: "train", id: "1")] != nil, "recently read")
            #expect(kept[RecordKey(model: "train", id: "2")] == nil, "least recently used")
            #expect(kept[RecordKey(model: "train", id: "59")] != nil, "just written")
            // Unpinned, record 0 goes like any other once newer records fill the cache.
            try await cache.setPinned(false, Self.keys([0]))
            for id in 60..<120 { try await cache.write([Self.record(id, body)], query: nil) }
            try await cache.flush()
            #expect(try await cache.records(Self.keys([0])).isEmpty)
        }
    }
}
