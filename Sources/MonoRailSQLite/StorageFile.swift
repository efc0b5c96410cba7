import Foundation
import GRDB

/// The tables of a storage file, and the checks a file passes before anything writes to it.
enum StorageFile {
    /// `PRAGMA application_id` of MonoRail's files ("MoRa"), so that a file of another app is told apart.
    static let applicationID: Int32 = 0x4D6F_5261

    /// The schema, one migration per version. A file with a migration this list lacks was written by
    /// a newer MonoRail.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    PRAGMA application_id = \(applicationID);
                    -- fetched_at: seconds since 2001-01-01, as Date keeps them, so they read back exactly.
                    CREATE TABLE record (
                        model TEXT NOT NULL,
                        id TEXT NOT NULL,
                        body BLOB NOT NULL,
                        fetched_at REAL NOT NULL,
                        etag TEXT,
                        last_modified TEXT,
                        size INTEGER NOT NULL,
                        used_at INTEGER NOT NULL,
                        PRIMARY KEY (model, id)
                    ) WITHOUT ROWID;
                    CREATE INDEX record_use ON record (used_at);
                    CREATE TABLE query (
                        model TEXT NOT NULL,
                        key TEXT NOT NULL,
                        ids BLOB NOT NULL,
                        related BLOB NOT NULL,
                        fetched_at REAL NOT NULL,
                        etag TEXT,
                        last_modified TEXT,
                        size INTEGER NOT NULL,
                        used_at INTEGER NOT NULL,
                        PRIMARY KEY (model, key)
                    ) WITHOUT ROWID;
                    CREATE INDEX query_use ON query (used_at);
                    CREATE TABLE pin (model TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (model, id)) WITHOUT ROWID;
                    -- The bytes kept, summed by triggers so a size check reads one row.
                    CREATE TABLE total (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL);
                    INSERT INTO total VALUES (1, 0);
                    CREATE TRIGGER record_added AFTER INSERT ON record
                        BEGIN UPDATE total SET bytes = bytes + NEW.size; END;
                    CREATE TRIGGER record_removed AFTER DELETE ON record
                        BEGIN UPDATE total SET bytes = bytes - OLD.size; END;
                    CREATE TRIGGER record_resized AFTER UPDATE OF size ON record
                        BEGIN UPDATE total SET bytes = bytes + NEW.size - OLD.size; END;
                    CREATE TRIGGER query_added AFTER INSERT ON query
                        BEGIN UPDATE total SET bytes = bytes + NEW.size; END;
                    CREATE TRIGGER query_removed AFTER DELETE ON query
                        BEGIN UPDATE total SET bytes = bytes - OLD.size; END;
                    CREATE TRIGGER query_resized AFTER UPDATE OF size ON query
                        BEGIN UPDATE total SET bytes = bytes + NEW.size - OLD.size; END;
                    """)
        }
        migrator.registerMigration("v2") { db in
            // The outbox: writes kept until the server confirms them, in the order they were made.
            try db.execute(
                sql: """
                    CREATE TABLE outbox (
                        sequence INTEGER PRIMARY KEY,
                        idempotency_key TEXT NOT NULL UNIQUE,
                        model TEXT NOT NULL,
                        verb TEXT NOT NULL,
                        id TEXT,
                        id_is_text INTEGER NOT NULL,
                        body TEXT,
                        fields TEXT NOT NULL,
                        if_match TEXT,
                        waits_for_if_match INTEGER NOT NULL,
                        created_at REAL NOT NULL,
                        attempts INTEGER NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v3") { db in
            // Parked writes: why the outbox stopped sending them, and failed answers counted to the limit.
            try db.execute(
                sql: """
                    ALTER TABLE outbox ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE outbox ADD COLUMN parked_code TEXT;
                    ALTER TABLE outbox ADD COLUMN parked_status INTEGER;
                    ALTER TABLE outbox ADD COLUMN parked_message TEXT;
                    ALTER TABLE outbox ADD COLUMN parked_at REAL;
                    """)
        }
        migrator.registerMigration("v4") { db in
            // The model's Swift type, to send a kept write before the app uses its model.
            try db.execute(sql: "ALTER TABLE outbox ADD COLUMN model_type TEXT")
        }
        migrator.registerMigration("v5") { db in
            // Which version of a record is newer is decided by the order requests were sent in, not by
            // the wall clock, which can be set back. Versions kept before are older than any new one.
            try db.execute(
                sql: """
                    ALTER TABLE record ADD COLUMN fetch_order INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE query ADD COLUMN fetch_order INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v6") { db in
            // The highest order written, kept as it rises: opening the file reads one row instead of
            // every record's.
            try db.execute(
                sql: """
                    ALTER TABLE total ADD COLUMN fetch_order INTEGER NOT NULL DEFAULT 0;
                    UPDATE total SET fetch_order = COALESCE((SELECT MAX(fetched) FROM (
                        SELECT MAX(fetch_order) AS fetched FROM record UNION ALL SELECT MAX(fetch_order) FROM query)), 0);
                    """)
        }
        migrator.registerMigration("v7") { db in
            // Where each live-updates stream resumes, written in the commit of the records it brought.
            try db.execute(
                sql:
                    "CREATE TABLE live_cursor (feed TEXT PRIMARY KEY NOT NULL, last_event_id TEXT NOT NULL) WITHOUT ROWID"
            )
        }
        migrator.registerMigration("v8") { db in
            // The Idempotency-Key of the atomic request a write went out in with others, so that a
            // replay sends the same writes together again.
            try db.execute(sql: "ALTER TABLE outbox ADD COLUMN batch TEXT")
        }
        migrator.registerMigration("v9") { db in
            // The trace context of the action that kept a write, as a JSON object of the tracer's
            // fields, so that its replay after a restart links to it.
            try db.execute(sql: "ALTER TABLE outbox ADD COLUMN trace_context TEXT")
        }
        migrator.registerMigration("v10") { db in
            // Whether a session that wrote is still open, or ended without closing the file (killed):
            // the next one reads every page (quick_check) only then. A file from before is checked once.
            try db.execute(sql: "ALTER TABLE total ADD COLUMN session_open INTEGER NOT NULL DEFAULT 1")
        }
        return migrator
    }()

    /// Checks an existing file without writing to it: a SQLite database, whole, MonoRail's, and of a
    /// schema this version knows (or empty).
    ///
    /// - Throws: ``SQLiteStorageError``.
    static func check(_ path: String) throws {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw SQLiteStorageError(.cannotOpen, path: path, "the file cannot be read", underlyingError: error)
        }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0 else { return }
        try checkHeader(path, size: size)
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            try queue.read { db in try checkContents(db, path: path) }
        } catch let error as SQLiteStorageError {
            throw error
        } catch let error as DatabaseError {
            throw classify(error, path: path)
        } catch {
            throw SQLiteStorageError(.cannotOpen, path: path, "the file cannot be opened", underlyingError: error)
        }
    }

    /// A file's pages whole (`quick_check`) unless the last session that wrote to it closed it,
    /// its application id MonoRail's (or none, for a file whose creation was interrupted), and its
    /// schema one this version knows.
    ///
    /// `quick_check` reads every page, most of a cold start; a kill cannot damage a WAL database, so
    /// it runs after a session that ended without closing the file, where something else may have
    /// gone wrong. A damaged page met later is ``SQLiteStorageError/Code/unreadable`` as here.
    private static func checkContents(_ db: Database, path: String) throws {
        // Any failure to read the mark, a damaged page included, reads as a session left open.
        let closed = (try? Int.fetchOne(db, sql: "SELECT session_open FROM total")) == 0
        let check = closed ? ["ok"] : try String.fetchAll(db, sql: "PRAGMA quick_check")
        guard check == ["ok"] else {
            throw SQLiteStorageError(
                .unreadable, path: path,
                "the database is damaged: "
                    + check.filter { !$0.hasPrefix("***") }.prefix(3).joined(separator: "; "))
        }
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let tables = try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        guard applicationID == Self.applicationID else {
            // The migrator makes its table before the first migration's transaction: a
            // process killed between left only that table, empty, and nothing of anyone's.
            let migrations =
                tables == ["grdb_migrations"]
                ? try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM grdb_migrations") ?? 0 : nil
            let interrupted = migrations == 0
            guard applicationID == 0, tables.isEmpty || interrupted else {
                throw SQLiteStorageError(
                    .foreign, path: path,
                    "the database belongs to another app (application id \(applicationID), tables "
                        + "\(tables.prefix(5).joined(separator: ", ")))")
            }
            return
        }
        if try migrator.hasBeenSuperseded(db) {
            throw SQLiteStorageError(
                .newerSchema, path: path,
                "the file was written by a newer MonoRail (schema \(try migrator.appliedIdentifiers(db).sorted()))"
            )
        }
    }

    /// The first 100 bytes: the SQLite magic, and a file as long as its header says.
    private static func checkHeader(_ path: String, size: Int) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw SQLiteStorageError(.cannotOpen, path: path, "the file cannot be read")
        }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw SQLiteStorageError(.unreadable, path: path, "the file is not a SQLite database")
        }
        func bigEndian(_ offset: Int, _ count: Int) -> Int {
            header[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
        }
        let rawPageSize = bigEndian(16, 2)
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        let pageCount = bigEndian(28, 4)
        // The page count is valid when its version matches the change counter (SQLite 3.7.0+), and
        // when no write-ahead log holds pages still to be copied in: a process killed while it
        // checkpointed leaves the first page written and the others in the log, which the next
        // opening copies in.
        let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        if log == 0, bigEndian(92, 4) == bigEndian(24, 4), pageCount > 0, size < pageCount * pageSize {
            throw SQLiteStorageError(
                .unreadable, path: path,
                "the file is truncated: \(size) bytes of the \(pageCount * pageSize) its header counts")
        }
    }

    /// A SQLite error as a storage error.
    static func classify(_ error: DatabaseError, path: String) -> SQLiteStorageError {
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            SQLiteStorageError(.unreadable, path: path, "the database is damaged", underlyingError: error)
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_FULL, .SQLITE_IOERR:
            SQLiteStorageError(.cannotOpen, path: path, "the file cannot be used", underlyingError: error)
        default:
            SQLiteStorageError(.failed, path: path, "SQLite failed", underlyingError: error)
        }
    }
}
