import Foundation
import GRDB
public import MonoRail
import MonoRailTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A record cache in a SQLite file: records survive restarts, so an app answers reads offline with
/// what it last saw.
///
/// ```swift
/// let storage = try SQLiteStorage(path: appSupport.appendingPathComponent("app.sqlite").path)
/// MonoRail.configure {
///     $0.storage = storage
///     $0.cachePolicy = .networkFirst      // the cache when the network fails
/// }
/// ```
///
/// - The file is SQLite in WAL mode through GRDB: readers never wait for a writer, and each write
///   (every record of one answer) is one transaction. Tables are created and upgraded by a
///   `DatabaseMigrator`; the file is the owner's only (0600), in a directory made 0700 when it is
///   created here.
/// - Records are kept by model and id, with their body as the server sent it, the time of the
///   request that fetched them, and their `ETag` and `Last-Modified`; the answers of reads by their
///   path and parameters, as the ordered ids of their records.
/// - Past ``maxBytes`` the least recently used records go first, except pinned ones
///   (``/MonoRail/ResourceStore/pin(_:)``).
/// - ``clear()`` deletes every row with SQLite's `secure_delete` on, rebuilds the file (`VACUUM`) and
///   empties the write-ahead log: afterwards no record's bytes are in the file or its log.
/// - A file that is damaged, of another app, or of a newer MonoRail is refused with a
///   ``SQLiteStorageError`` and left as it is, unless ``Recovery/moveAside`` is asked for.
public final class SQLiteStorage: RecordCache {
    /// What to do when the file exists but cannot be used.
    public enum Recovery: Sendable, Hashable {
        /// Throw a ``SQLiteStorageError``; the file stays as it is.
        case fail
        /// Move the file (and its log) aside with ``SQLiteStorage/moveAside(path:)`` and start with
        /// an empty one; ``SQLiteStorage/movedAsidePath`` says where it went. A file that cannot be
        /// opened at all (permissions) still throws.
        case moveAside
    }

    /// The database file.
    public let path: String
    /// The most bytes of records and queries kept; `nil` for no bound.
    public let maxBytes: Int?
    /// Where an unusable file was moved by ``Recovery/moveAside``; `nil` when none was.
    public let movedAsidePath: String?
    /// The highest order of a record or query in the file when it was opened: this launch's
    /// requests are ordered after it.
    public let highestOrder: Int64

    let pool: DatabasePool
    /// Uses of records and queries since the last write, written with the next one: a read costs
    /// no write.
    let uses: Locked<Uses>
    /// Writes accepted and not yet committed, which reads see first.
    let pending = Locked(Pending())
    /// Whether this session wrote to the file since it last marked it closed (`total.session_open`).
    let sessionOpen = Locked(false)

    /// Writes are committed in the background, in order, several to a transaction when they queue
    /// up: an action that merged an answer does not wait for the disk. Until then the records are
    /// read from here.
    /// One write's share of a commit.
    struct Batch {
        var records: [StoredRecord]
        var query: StoredQuery?
        /// Records the server deleted, forgotten in the same commit.
        var deleted: [RecordKey] = []
        var cursor: LiveCursor?
    }

    struct Pending {
        var records: [RecordKey: StoredRecord] = [:]
        var queries: [QueryKey: StoredQuery] = [:]
        var batches: [Batch] = []
        /// Cursors not yet committed, by feed.
        var cursors: [String: String] = [:]
        /// The batches the writer took and has not committed yet: a commit on the way out writes
        /// them again (each write is idempotent) rather than lose them.
        var committing: [Batch] = []
        /// The task committing `batches`; `nil` when none is queued.
        var writer: Task<Void, Never>?
        /// Why the last commit failed, reported by the next write or ``SQLiteStorage/flush()``.
        var failure: (any Error)?
    }

    /// Opens the file at `path`, or creates it (and its directory).
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - maxBytes: The most bytes of records kept; default 256 MiB; `nil` for no bound.
    ///   - recovery: What to do with an existing file that cannot be used; default ``Recovery/fail``.
    /// - Throws: ``SQLiteStorageError``: ``SQLiteStorageError/Code/unreadable`` for a damaged file or
    ///   one that is not SQLite, ``SQLiteStorageError/Code/foreign`` for another app's database,
    ///   ``SQLiteStorageError/Code/newerSchema`` for a newer MonoRail's, and
    ///   ``SQLiteStorageError/Code/cannotOpen`` when the file or directory cannot be used.
    public init(path: String, maxBytes: Int? = 256 << 20, recovery: Recovery = .fail) throws {
        self.path = path
        self.maxBytes = maxBytes.map { max(0, $0) }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw SQLiteStorageError(
                    .cannotOpen, path: path, "the directory cannot be created", underlyingError: error)
            }
        }
        var moved: String?
        if FileManager.default.fileExists(atPath: path) {
            do {
                try StorageFile.check(path)
            } catch let error as SQLiteStorageError where recovery == .moveAside && error.code != .cannotOpen {
                moved = try Self.moveAside(path: path)
            }
        }
        movedAsidePath = moved
        try Self.createOwnerOnly(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Deleted and overwritten records are zeroed on disk, not left in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try StorageFile.migrator.migrate(pool)
            let clock = try pool.read { db in
                try Int64.fetchOne(
                    db,
                    sql:
                        "SELECT MAX(used) FROM (SELECT MAX(used_at) AS used FROM record UNION ALL SELECT MAX(used_at) FROM query)"
                )
            }
            uses = Locked(Uses(clock: clock ?? 0))
            highestOrder = try pool.read { db in try Int64.fetchOne(db, sql: "SELECT fetch_order FROM total") } ?? 0
        } catch let error as DatabaseError {
            throw StorageFile.classify(error, path: path)
        }
        Self.commitOnQuit(self)
    }

    /// Moves an unusable file, and its write-ahead log and shared-memory index, aside: to
    /// `<path>.unreadable-<date>`, beside it. The store can then start empty at `path`, and the
    /// old file can still be examined or sent with a bug report.
    ///
    /// - Returns: Where the file went.
    /// - Throws: ``SQLiteStorageError/Code/cannotOpen`` when it cannot be moved.
    @discardableResult
    public static func moveAside(path: String) throws -> String {
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "-")
        var target = "\(path).unreadable-\(stamp)"
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            target = "\(path).unreadable-\(stamp)-\(attempt)"
        }
        do {
            try FileManager.default.moveItem(atPath: path, toPath: target)
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.moveItem(atPath: path + suffix, toPath: target + suffix)
            }
        } catch {
            throw SQLiteStorageError(.cannotOpen, path: path, "the file cannot be moved aside", underlyingError: error)
        }
        return target
    }

    /// Creates the file readable by its owner only; SQLite gives its log and index the same mode.
    private static func createOwnerOnly(_ path: String) throws {
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SQLiteStorageError(
                .cannotOpen, path: path, "the file cannot be created: \(String(cString: strerror(errno)))")
        }
        close(descriptor)
    }

    // MARK: - RecordCache

    /// `true`: a record of a JSON response is kept as its text until its write is committed, and in
    /// MessagePack in the file; the conversion is the background commit's, not the action's.
    public var acceptsJSON: Bool { true }

    /// Keeps records and the query they answered: at once for reads, and in one transaction in the
    /// background, in the order of the writes (``flush()`` waits for it). A record whose stored
    /// version was fetched later stays. Then evicts what no longer fits.
    ///
    /// - Throws: The error of an earlier background commit that failed, once; this write is kept.
    public func write(_ records: [StoredRecord], query: StoredQuery?) async throws {
        try enqueue(Batch(records: records, query: query))
    }

    /// Queues a batch for the background commit, readable at once.
    ///
    /// - Throws: The error of an earlier background commit that failed, once; this batch is kept.
    private func enqueue(_ batch: Batch) throws {
        let failure = pending.withLock { pending -> (any Error)? in
            for record in batch.records {
                guard let queued = pending.records[record.key] else {
                    pending.records[record.key] = record
                    continue
                }
                // Two answers before one commit: the later is laid over the earlier, as the file's
                // copy will be.
                if queued.order <= record.order { pending.records[record.key] = record.laid(over: queued) ?? record }
            }
            if let query = batch.query, pending.queries[query.key].map({ $0.order <= query.order }) ?? true {
                pending.queries[query.key] = query
            }
            // A copy of a deleted record waiting to be committed is not read back; the commit deletes
            // the file's.
            for key in batch.deleted { pending.records[key] = nil }
            if let cursor = batch.cursor { pending.cursors[cursor.feed] = cursor.lastEventID }
            pending.batches.append(batch)
            if pending.writer == nil { pending.writer = Task { await self.commitPending() } }
            defer { pending.failure = nil }
            return pending.failure
        }
        if let failure { throw failure }
    }

    /// Waits until every write made so far is committed to the file.
    ///
    /// - Throws: Why a background commit failed, if one did since the last report.
    public func flush() async throws {
        while let writer = pending.withLock({ $0.writer }) { await writer.value }
        if let failure = pending.withLock({ state in
            defer { state.failure = nil }
            return state.failure
        }) {
            throw failure
        }
    }

    /// Commits the queued writes, all that queued while the last commit ran in one transaction,
    /// until none are left.
    private func commitPending() async {
        while true {
            let batches = pending.withLock { pending in
                defer { pending.batches = [] }
                if pending.batches.isEmpty { pending.writer = nil }
                pending.committing = pending.batches
                return pending.batches
            }
            if batches.isEmpty { return }
            do {
                try await commit(batches)
            } catch {
                pending.withLock { $0.failure = error }
            }
            // Committed (or lost): reads go to the file, unless a later write replaced the entry.
            pending.withLock { pending in
                pending.committing = []
                for batch in batches {
                    for record in batch.records where pending.records[record.key]?.fetched == record.fetched {
                        pending.records[record.key] = nil
                    }
                    if let query = batch.query, pending.queries[query.key]?.fetched == query.fetched {
                        pending.queries[query.key] = nil
                    }
                    if let cursor = batch.cursor, pending.cursors[cursor.feed] == cursor.lastEventID {
                        pending.cursors[cursor.feed] = nil
                    }
                }
            }
        }
    }

    /// Keeps what pushed changes brought and the cursor after them in one commit, in the order of
    /// the writes, as ``write(_:query:)`` keeps records: in the background (``flush()`` waits for it).
    ///
    /// - Throws: The error of an earlier background commit that failed, once; this write is kept.
    public func keepPushed(_ records: [StoredRecord], deleted: [RecordKey], cursor: LiveCursor?) async throws {
        try enqueue(Batch(records: records, deleted: deleted, cursor: cursor))
    }

    /// The cursor kept last for a feed, one not yet committed included.
    public func liveCursor(feed: String) async throws -> String? {
        if let queued = pending.withLock({ $0.cursors[feed] }) { return queued }
        return try reading { db in
            try String.fetchOne(db, sql: "SELECT last_event_id FROM live_cursor WHERE feed = ?", arguments: [feed])
        }
    }

    private func commit(_ batches: [Batch]) async throws {
        try await writing { db, use in try self.writeBatches(batches, use: use, db) }
    }

    /// Writes queued batches in the transaction of `db`: records laid over their stored copies,
    /// queries, deletions and cursors, then evicts what no longer fits.
    func writeBatches(_ batches: [Batch], use: Int64, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO record (model, id, body, fetched_at, etag, last_modified, size, used_at, fetch_order)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (model, id) DO UPDATE SET
                    body = excluded.body, fetched_at = excluded.fetched_at, etag = excluded.etag,
                    last_modified = excluded.last_modified, size = excluded.size, used_at = excluded.used_at,
                    fetch_order = excluded.fetch_order
                WHERE excluded.fetch_order >= record.fetch_order
                """)
        let stored = try db.cachedStatement(
            sql: "SELECT body, fetched_at, fetch_order FROM record WHERE model = ? AND id = ?")
        var highest = Int64.min
        for batch in batches {
            let (records, query) = (batch.records, batch.query)
            for given in records {
                // Converted here, in the background, rather than on the action's way; laid over
                // the stored copy, whose members it leaves out stay.
                var record = given.inMessagePack()
                if let older = try Self.stored(record.key, stored), let merged = record.laid(over: older) {
                    record = merged
                }
                highest = max(highest, record.order)
                try statement.execute(arguments: [
                    record.key.model, record.key.id, record.body, record.fetchedAt.timeIntervalSinceReferenceDate,
                    record.etag,
                    record.lastModified, Self.size(of: record), use, record.order,
                ])
            }
            if let query {
                highest = max(highest, query.order)
                try Self.write(query, use: use, db)
            }
            if !batch.deleted.isEmpty { try Self.forgetDeleted(batch.deleted, db) }
            if let cursor = batch.cursor {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO live_cursor (feed, last_event_id) VALUES (?, ?)",
                    arguments: [cursor.feed, cursor.lastEventID])
            }
        }
        try Self.raiseHighestOrder(to: highest, db)
        try self.evictIfFull(db)
    }

    /// The file's copy of a record, if it has one.
    static func stored(_ key: RecordKey, _ statement: Statement) throws -> StoredRecord? {
        guard let row = try Row.fetchOne(statement, arguments: [key.model, key.id]) else { return nil }
        return StoredRecord(
            key: key, body: try row.decode(Data.self, atIndex: 0),
            fetchedAt: Date(timeIntervalSinceReferenceDate: try row.decode(Double.self, atIndex: 1)),
            order: try row.decode(Int64.self, atIndex: 2))
    }

    /// Keeps a stored query unless the file holds one fetched later.
    private static func write(_ query: StoredQuery, use: Int64, _ db: Database) throws {
        let ids = KeyList.encode(query.ids)
        let related = KeyList.encode(query.related)
        try db.execute(
            sql: """
                INSERT INTO query (model, key, ids, related, fetched_at, etag, last_modified, size, used_at,
                    fetch_order)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (model, key) DO UPDATE SET
                    ids = excluded.ids, related = excluded.related, fetched_at = excluded.fetched_at,
                    etag = excluded.etag, last_modified = excluded.last_modified, size = excluded.size,
                    used_at = excluded.used_at, fetch_order = excluded.fetch_order
                WHERE excluded.fetch_order >= query.fetch_order
                """,
            arguments: [
                query.key.model, query.key.key, ids, related, query.fetchedAt.timeIntervalSinceReferenceDate,
                query.etag, query.lastModified, ids.count + related.count + query.key.key.utf8.count + 64, use,
                query.order,
            ])
    }

    /// Keeps the highest order written, for ``highestOrder`` at the next opening.
    private static func raiseHighestOrder(to order: Int64, _ db: Database) throws {
        try db.execute(sql: "UPDATE total SET fetch_order = ? WHERE fetch_order < ?", arguments: [order, order])
    }

    /// Moves the fetched-at of records and a query forward.
    public func refresh(_ keys: [RecordKey], query: QueryKey?, fetched: FetchStamp) async throws {
        let (time, order) = (fetched.date.timeIntervalSinceReferenceDate, fetched.order)
        try await flush()
        try await writing { db, _ in
            let statement = try db.cachedStatement(
                sql: """
                    UPDATE record SET fetched_at = ?, fetch_order = ? WHERE model = ? AND id = ? AND fetch_order < ?
                    """)
            for key in keys { try statement.execute(arguments: [time, order, key.model, key.id, order]) }
            if let query {
                try db.execute(
                    sql: """
                        UPDATE query SET fetched_at = ?, fetch_order = ? WHERE model = ? AND key = ? AND fetch_order < ?
                        """,
                    arguments: [time, order, query.model, query.key, order])
            }
            try Self.raiseHighestOrder(to: order, db)
        }
    }

    /// Marks every record and query as fetched at 1970-01-01, in one transaction: stale for any time
    /// to live, still there for an offline read.
    public func markStale() async throws {
        try await flush()
        let longAgo = Date(timeIntervalSince1970: 0).timeIntervalSinceReferenceDate
        try await writing { db, _ in
            try db.execute(sql: "UPDATE record SET fetched_at = ?", arguments: [longAgo])
            try db.execute(sql: "UPDATE query SET fetched_at = ?", arguments: [longAgo])
        }
    }

    /// Forgets records.
    public func remove(_ keys: [RecordKey]) async throws {
        try await flush()
        try await writing { db, _ in
            let statement = try db.cachedStatement(sql: "DELETE FROM record WHERE model = ? AND id = ?")
            for key in keys { try statement.execute(arguments: [key.model, key.id]) }
        }
    }

    /// Forgets records the server deleted, and their ids in the queries kept, in one transaction.
    public func forgetDeleted(_ keys: [RecordKey]) async throws {
        try await flush()
        try await writing { db, _ in try Self.forgetDeleted(keys, db) }
    }

    /// Deletes the records, and their ids from the stored queries that name them.
    private static func forgetDeleted(_ keys: [RecordKey], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM record WHERE model = ? AND id = ?")
        for key in keys { try statement.execute(arguments: [key.model, key.id]) }
        for (model, keys) in Dictionary(grouping: keys, by: \.model) {
            let deleted = Set(keys.map(\.id))
            let rows = try Row.fetchAll(db, sql: "SELECT key, ids FROM query WHERE model = ?", arguments: [model])
            for row in rows {
                let ids = try KeyList.decode(row[1])
                guard ids.contains(where: deleted.contains) else { continue }
                let kept = KeyList.encode(ids.filter { !deleted.contains($0) })
                let key: String = row[0]
                try db.execute(
                    sql: "UPDATE query SET ids = ? WHERE model = ? AND key = ?", arguments: [kept, model, key])
            }
        }
    }

    /// Forgets the records of a model an authoritative list no longer holds, in one transaction: a
    /// record a later answer stored meanwhile is not among them.
    public func forgetAbsent(model: String, keeping ids: Set<String>, fetchedBefore order: Int64) async throws
        -> [RecordKey]
    {
        try await flush()
        let absent = Locked<[RecordKey]>([])
        try await writing { db, _ in
            let found = try String.fetchAll(
                db, sql: "SELECT id FROM record WHERE model = ? AND fetch_order < ?", arguments: [model, order]
            )
            let keys = found.filter { !ids.contains($0) }.map { RecordKey(model: model, id: $0) }
            try Self.forgetDeleted(keys, db)
            absent.withLock { $0 = keys }
        }
        return absent.withLock { $0 }
    }

    /// Forgets every record and query of a model.
    public func removeAll(model: String) async throws {
        try await flush()
        try await writing { db, _ in
            try db.execute(sql: "DELETE FROM record WHERE model = ?", arguments: [model])
            try db.execute(sql: "DELETE FROM query WHERE model = ?", arguments: [model])
        }
    }

    /// Keeps records from eviction, or lets them go; a key may be pinned before its record arrives.
    public func setPinned(_ pinned: Bool, _ keys: [RecordKey]) async throws {
        try await flush()
        try await writing { db, _ in
            let statement = try db.cachedStatement(
                sql: pinned
                    ? "INSERT OR IGNORE INTO pin (model, id) VALUES (?, ?)"
                    : "DELETE FROM pin WHERE model = ? AND id = ?")
            for key in keys { try statement.execute(arguments: [key.model, key.id]) }
            if !pinned { try self.evictIfFull(db) }
        }
    }

    /// Forgets everything so that it cannot be read back: every row is deleted with `secure_delete`
    /// on, the file is rebuilt without free pages, and the write-ahead log is emptied to zero bytes.
    public func clear() async throws {
        // Writes not yet begun are dropped; one being committed finishes first, then goes too.
        let writer = pending.withLock { pending in
            pending.records = [:]
            pending.queries = [:]
            pending.cursors = [:]
            pending.batches = []
            pending.committing = []
            return pending.writer
        }
        await writer?.value
        uses.withLock { $0.reset() }
        do {
            // A barrier: no reader holds a snapshot that the checkpoint would have to keep.
            try await pool.barrierWriteWithoutTransaction { db in
                try db.inTransaction {
                    // The outbox too: kept writes are the signed-out user's.
                    try db.execute(
                        sql:
                            "DELETE FROM record; DELETE FROM query; DELETE FROM pin; DELETE FROM outbox; DELETE FROM live_cursor;"
                            + " UPDATE total SET session_open = 1"
                    )
                    return .commit
                }
                try db.execute(sql: "VACUUM")
                try db.checkpoint(.truncate)
            }
            sessionOpen.withLock { $0 = true }
        } catch let error as DatabaseError {
            throw StorageFile.classify(error, path: path)
        }
    }
}
