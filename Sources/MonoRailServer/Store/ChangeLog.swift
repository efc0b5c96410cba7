import Foundation
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
/// the log exactly when it is in the records, and in commit order: SQLite has one writer, and on
/// PostgreSQL a transaction takes the log's advisory lock before it appends and holds it until it
/// commits, so a later id is never visible before an earlier one, whichever process wrote them.
package enum ChangeLog {
    package static let table = "monorail_changes"
    /// The log's advisory lock key (PostgreSQL).
    static let lockKey: Int64 = 0x4d6f_6e6f_4c6f_67
    /// The channel each commit notifies (PostgreSQL), with its newest id: a wake-up for the other
    /// processes' streams, which then read the log.
    package static let channel = "monorail_changes"

    static func create(in db: any SQLConnection) throws {
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                id \(db.dialect.generatedKey),
                kind TEXT NOT NULL,
                resource TEXT NOT NULL,
                record_id TEXT NOT NULL,
                data TEXT NOT NULL
            )
            """)
    }

    /// Appends a change inside the write's transaction, and wakes the streams once it commits.
    static func append(
        _ kind: Change.Kind, _ resource: ResourceSchema, record: JSONValue, db: any SQLConnection,
        signal: ChangeSignal, retention: Int
    ) throws {
        let recordID =
            record[resource.primaryKeyName].map { $0.intValue.map(String.init) ?? $0.stringValue ?? "" } ?? ""
        let data = String(decoding: JSONWriter.serialize(.object([resource.name: record])), as: UTF8.self)
        let values: [SQLValue] = [.text(kind.rawValue), .text(resource.name), .text(recordID), .text(data)]
        let append: String
        if let serialize = db.dialect.serializingStatement(key: lockKey) {
            // One round trip: the lock, then the row, then the notification, which PostgreSQL
            // delivers when the transaction commits.
            append = """
                WITH appended AS (
                    INSERT INTO \(table) (kind, resource, record_id, data)
                    SELECT ?, ?, ?, ? FROM (\(serialize)) AS serialized RETURNING id)
                SELECT id, pg_notify('\(channel)', id::text) FROM appended
                """
        } else {
            append = "INSERT INTO \(table) (kind, resource, record_id, data) VALUES (?, ?, ?, ?) RETURNING id"
        }
        guard let id = try db.fetchValue(append, values).integer else {
            throw SchemaError("the database gave the change no id")
        }
        // Older changes go in batches; a client that asks for one of them is told to reset.
        if id % 256 == 0, id > Int64(retention) {
            try db.execute("DELETE FROM \(table) WHERE id <= ?", [.integer(id - Int64(retention))])
        }
        db.afterCommit { signal.advance(to: id) }
    }

    /// Up to `limit` changes after `cursor`, oldest first.
    static func changes(after cursor: Int64, limit: Int, db: any SQLConnection) throws -> [Change] {
        try db.fetchAll(
            "SELECT id, kind, resource, record_id, data FROM \(table) WHERE id > ? ORDER BY id LIMIT ?",
            [.integer(cursor), .integer(Int64(limit))]
        ).compactMap { row in
            guard let id = row[0].integer, let kind = row[1].text.flatMap(Change.Kind.init(rawValue:)) else {
                return nil
            }
            return Change(
                id: id, kind: kind, resource: row[2].text ?? "", recordID: row[3].text ?? "", data: row[4].text ?? "")
        }
    }

    /// The oldest change kept, and the newest ever appended (kept too: retention never removes the
    /// newest): `(nil, 0)` for none.
    static func bounds(db: any SQLConnection) throws -> (oldest: Int64?, newest: Int64) {
        let row = try db.fetchOne("SELECT MIN(id), MAX(id) FROM \(table)")
        return (row?[0].integer, row?[1].integer ?? 0)
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
