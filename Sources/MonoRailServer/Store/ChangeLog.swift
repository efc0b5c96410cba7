import Foundation
import GRDB
import MonoRailClient
import MonoRailTransport

/// One write, as the change log keeps it and `GET /changes` sends it.
public struct Change: Sendable, Hashable {
    /// What happened to a record.
    public enum Kind: String, Sendable, Hashable {
        /// The record was created.
        case created
        /// The record changed.
        case updated
        /// The record was deleted.
        case destroyed
    }

    /// The change's place in the log: increasing in commit order, the event's `id`.
    public var id: Int64
    /// Created, updated or destroyed: the event's name.
    public var kind: Kind
    /// The resource's singular name.
    public var resource: String
    /// The record's id, as text.
    public var recordID: String
    /// The event's data: `{"train": {…}}`, the record as the write answered it; the id alone for a
    /// destroy.
    public var data: String
}

/// The log of every write, appended in the same transaction as the write, so that a change is in
/// the log exactly when it is in the records, and in commit order: SQLite has one writer.
enum ChangeLog {
    static let table = "monorail_changes"

    static func create(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(table) (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL,
                    resource TEXT NOT NULL,
                    record_id TEXT NOT NULL,
                    data TEXT NOT NULL
                )
                """)
    }

    /// Appends a change inside the write's transaction, and wakes the streams once it commits.
    static func append(
        _ kind: Change.Kind, _ resource: ResourceSchema, record: JSONValue, db: Database, signal: ChangeSignal,
        retention: Int
    ) throws {
        let recordID =
            record[resource.primaryKeyName].map { $0.intValue.map(String.init) ?? $0.stringValue ?? "" } ?? ""
        let data = String(decoding: JSONWriter.serialize(.object([resource.name: record])), as: UTF8.self)
        try db.execute(
            sql: "INSERT INTO \(table) (kind, resource, record_id, data) VALUES (?, ?, ?, ?)",
            arguments: [kind.rawValue, resource.name, recordID, data])
        let id = db.lastInsertedRowID
        // Older changes go in batches; a client that asks for one of them is told to reset.
        if id % 256 == 0, id > Int64(retention) {
            try db.execute(sql: "DELETE FROM \(table) WHERE id <= ?", arguments: [id - Int64(retention)])
        }
        db.afterNextTransaction { _ in signal.advance(to: id) }
    }

    /// Up to `limit` changes after `cursor`, oldest first.
    static func changes(after cursor: Int64, limit: Int, db: Database) throws -> [Change] {
        try Row.fetchAll(
            db, sql: "SELECT id, kind, resource, record_id, data FROM \(table) WHERE id > ? ORDER BY id LIMIT ?",
            arguments: [cursor, limit]
        ).compactMap { row in
            guard let kind = Change.Kind(rawValue: row[1]) else { return nil }
            return Change(id: row[0], kind: kind, resource: row[2], recordID: row[3], data: row[4])
        }
    }

    /// The oldest change kept, and the newest ever appended (kept too): `(nil, 0)` for none.
    static func bounds(db: Database) throws -> (oldest: Int64?, newest: Int64) {
        let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(id) FROM \(table)")
        let newest =
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table]) ?? 0
        return (oldest, newest)
    }
}

/// The newest change committed, and the streams waiting for a newer one.
public final class ChangeSignal: Sendable {
    private struct State {
        var newest: Int64 = 0
        var isClosed = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    init() {}

    /// The newest change committed that this process knows of.
    public var newest: Int64 { state.withLock { $0.newest } }

    /// Notes that changes up to `id` are committed, and wakes every waiting stream.
    public func advance(to id: Int64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard id > state.newest else { return [] }
            state.newest = id
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the server is stopping: streams end.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Ends every stream, now and from now on: the server is stopping, and would otherwise wait for
    /// streams that never end.
    public func close() {
        let waiters = state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until a change newer than `cursor` is committed, or `timeout` passes, or the task is
    /// cancelled. Returns whether a newer change is known.
    func wait(beyond cursor: Int64, timeout: Duration) async -> Bool {
        let key = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                        let isDue = self.state.withLock { state in
                            if state.newest > cursor || state.isClosed || Task.isCancelled { return true }
                            state.waiters[key] = waiter
                            return false
                        }
                        if isDue { waiter.resume() }
                    }
                } onCancel: {
                    self.state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        return newest > cursor
    }
}
