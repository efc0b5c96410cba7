import Foundation
import MonoRailTransport

/// A record cache in memory, bounded in size: every store's cache unless its configuration names
/// another (``MonoRail/Configuration/storage``). It answers reads while the process lives; for
/// records that survive a restart use `SQLiteStorage` (module `MonoRailSQLite`).
///
/// When the records kept pass ``maxBytes``, the least recently used ones that are not pinned are
/// dropped until they take up nine tenths of it, so that a cache at its bound does not evict on
/// every write.
///
/// ```swift
/// let store = ResourceStore(configuration: configuration, storage: InMemoryRecordCache(maxBytes: 64 << 20))
/// ```
public final class InMemoryRecordCache: RecordCache {
    /// The most bytes of records kept (their bodies, keys and bookkeeping).
    public let maxBytes: Int

    private struct Entry {
        var record: StoredRecord
        var lastUse: UInt64
        var size: Int
    }

    private struct State {
        var records: [RecordKey: Entry] = [:]
        var queries: [QueryKey: (query: StoredQuery, lastUse: UInt64, size: Int)] = [:]
        var pinned: Set<RecordKey> = []
        var bytes = 0
        /// A use counter: the order of uses, whatever the clock does.
        var clock: UInt64 = 0

        mutating func tick() -> UInt64 {
            clock += 1
            return clock
        }

        /// The record of `key`, marked as used at `use`: one lookup.
        mutating func use(_ key: RecordKey, at use: UInt64) -> StoredRecord? {
            guard let index = records.index(forKey: key) else { return nil }
            records.values[index].lastUse = use
            return records.values[index].record
        }
    }

    private let state = Locked(State())

    /// Creates an empty cache.
    ///
    /// - Parameter maxBytes: The most bytes of records kept; default 32 MiB.
    public init(maxBytes: Int = 32 << 20) {
        self.maxBytes = max(0, maxBytes)
    }

    /// `true`: a record of a JSON response is kept as its text, as it came; nothing is converted.
    public var acceptsJSON: Bool { true }

    /// The number of records kept.
    public var count: Int { state.withLock { $0.records.count } }

    /// The bytes the records and queries kept take up, as counted against ``maxBytes``.
    public var byteCount: Int { state.withLock { $0.bytes } }

    /// The records kept among `keys`, each marked as just used.
    public func records(_ keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        state.withLock { state in
            var found: [RecordKey: StoredRecord] = [:]
            found.reserveCapacity(keys.count)
            let use = state.tick()
            for key in keys {
                if let record = state.use(key, at: use) { found[key] = record }
            }
            return found
        }
    }

    /// The records kept among `keys`, in their order, each marked as just used.
    public func records(inOrderOf keys: [RecordKey]) async throws -> [StoredRecord?] {
        state.withLock { state in
            let use = state.tick()
            return keys.map { state.use($0, at: use) }
        }
    }

    /// The stored answer to a read, marked as just used.
    public func query(_ key: QueryKey) async throws -> StoredQuery? {
        state.withLock { state in
            guard let entry = state.queries[key] else { return nil }
            let use = state.tick()
            state.queries[key]?.lastUse = use
            return entry.query
        }
    }

    /// Keeps records (each unless a later one is kept) and the query they answered, then evicts
    /// what no longer fits.
    public func write(_ records: [StoredRecord], query: StoredQuery?) async throws {
        state.withLock { state in
            let use = state.tick()
            for given in records {
                var record = given
                if let stored = state.records[record.key] {
                    if stored.record.order > record.order { continue }
                    // Members this copy leaves out keep the stored copy's values, as on the instance.
                    record = record.laid(over: stored.record) ?? record
                }
                let size = Self.size(of: record)
                state.bytes += size - (state.records[record.key]?.size ?? 0)
                state.records[record.key] = Entry(record: record, lastUse: use, size: size)
            }
            if let query {
                let size = Self.size(of: query)
                state.bytes += size - (state.queries[query.key]?.size ?? 0)
                state.queries[query.key] = (query, use, size)
            }
            evictIfFull(&state)
        }
    }

    /// Marks every record and query as fetched at 1970-01-01: stale for any time to live.
    public func markStale() async throws {
        let longAgo = Date(timeIntervalSince1970: 0)
        state.withLock { state in
            for key in Array(state.records.keys) { state.records[key]?.record.fetchedAt = longAgo }
            for key in Array(state.queries.keys) { state.queries[key]?.query.fetchedAt = longAgo }
        }
    }

    /// Moves the fetched-at of records and a query forward to `fetched`.
    public func refresh(_ keys: [RecordKey], query: QueryKey?, fetched: FetchStamp) async throws {
        state.withLock { state in
            for key in keys where state.records[key].map({ $0.record.order < fetched.order }) == true {
                state.records[key]?.record.fetchedAt = fetched.date
                state.records[key]?.record.order = fetched.order
            }
            if let query, let stored = state.queries[query]?.query, stored.order < fetched.order {
                state.queries[query]?.query.fetchedAt = fetched.date
                state.queries[query]?.query.order = fetched.order
            }
        }
    }

    /// Forgets records.
    public func remove(_ keys: [RecordKey]) async throws {
        state.withLock { state in
            for key in keys {
                guard let removed = state.records.removeValue(forKey: key) else { continue }
                state.bytes -= removed.size
            }
        }
    }

    /// Forgets records the server deleted, and their ids in the queries kept.
    public func forgetDeleted(_ keys: [RecordKey]) async throws {
        try await remove(keys)
        let deleted = Dictionary(grouping: keys, by: \.model).mapValues { Set($0.map(\.id)) }
        state.withLock { state in
            for (key, entry) in state.queries {
                guard let ids = deleted[key.model], entry.query.ids.contains(where: ids.contains) else { continue }
                state.queries[key]?.query.ids.removeAll(where: ids.contains)
            }
        }
    }

    /// Forgets the records of a model an authoritative list no longer holds.
    public func forgetAbsent(model: String, keeping ids: Set<String>, fetchedBefore order: Int64) async throws
        -> [RecordKey]
    {
        let absent = state.withLock { state in
            state.records.compactMap { key, entry in
                key.model == model && !ids.contains(key.id) && entry.record.order < order ? key : nil
            }
        }
        try await forgetDeleted(absent)
        return absent
    }

    /// Forgets every record and query of a model.
    public func removeAll(model: String) async throws {
        state.withLock { state in
            for (key, entry) in state.records where key.model == model {
                state.records[key] = nil
                state.bytes -= entry.size
            }
            for (key, entry) in state.queries where key.model == model {
                state.queries[key] = nil
                state.bytes -= entry.size
            }
        }
    }

    /// Keeps records from eviction, or lets them go; a key may be pinned before its record arrives.
    public func setPinned(_ pinned: Bool, _ keys: [RecordKey]) async throws {
        state.withLock { state in
            if pinned {
                state.pinned.formUnion(keys)
            } else {
                state.pinned.subtract(keys)
                evictIfFull(&state)
            }
        }
    }

    /// Forgets everything; the memory is released.
    public func clear() async throws {
        // A new state rather than emptied collections: the old storage is released, not kept for reuse.
        state.withLock { $0 = State() }
    }

    // MARK: - Eviction

    private func evictIfFull(_ state: inout State) {
        guard state.bytes > maxBytes else { return }
        let target = maxBytes / 10 * 9
        var candidates: [(use: UInt64, record: RecordKey?, query: QueryKey?)] = []
        candidates.reserveCapacity(state.records.count + state.queries.count)
        for (key, entry) in state.records where !state.pinned.contains(key) {
            candidates.append((entry.lastUse, key, nil))
        }
        for (key, entry) in state.queries { candidates.append((entry.lastUse, nil, key)) }
        candidates.sort { $0.use < $1.use }
        for candidate in candidates {
            guard state.bytes > target else { break }
            if let key = candidate.record, let removed = state.records.removeValue(forKey: key) {
                state.bytes -= removed.size
            } else if let key = candidate.query, let removed = state.queries.removeValue(forKey: key) {
                state.bytes -= removed.size
            }
        }
    }

    /// What a record costs: its body, its key and about a dictionary entry's bookkeeping.
    private static func size(of record: StoredRecord) -> Int {
        record.body.count + record.key.model.utf8.count + record.key.id.utf8.count + (record.etag?.utf8.count ?? 0)
            + (record.lastModified?.utf8.count ?? 0) + 96
    }

    private static func size(of query: StoredQuery) -> Int {
        query.key.key.utf8.count + query.ids.reduce(0) { $0 + $1.utf8.count + 16 }
            + query.related.reduce(0) { $0 + $1.model.utf8.count + $1.id.utf8.count + 32 } + 128
    }
}
