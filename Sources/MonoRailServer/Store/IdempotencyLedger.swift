public import Foundation
import GRDB

/// One write the server carried out under an `Idempotency-Key`, and the response it gave, as the
/// ledger keeps them.
public struct IdempotencyEntry: Sendable, Hashable {
    /// The key the client sent.
    public var key: String
    /// `"POST"`, `"PATCH"`, …
    public var method: String
    /// The request path, before the query.
    public var path: String
    /// The request's method, path and attributes, in canonical JSON: what a repeat must match.
    public var fingerprint: String
    /// The status of the stored response.
    public var status: Int
    /// The stored response's `Content-Type`, `Location` and `ETag`, when it had them.
    public var headers: [String: String]
    /// The stored response's body.
    public var body: Data
    /// When the write was carried out.
    public var createdAt: Date
}

/// The table of `Idempotency-Key`s the server has answered, written in the same transaction as the
/// write each one carried out, so a key is on record exactly when its effect is.
enum IdempotencyLedger {
    static let table = "monorail_idempotency"

    static func create(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(table) (
                    key TEXT PRIMARY KEY NOT NULL,
                    method TEXT NOT NULL,
                    path TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    status INTEGER NOT NULL,
                    headers TEXT NOT NULL,
                    body BLOB NOT NULL,
                    created_at REAL NOT NULL)
                """)
    }

    static func entry(_ key: String, db: Database) throws -> IdempotencyEntry? {
        try Row.fetchOne(db, sql: "SELECT * FROM \(table) WHERE key = ?", arguments: [key]).map(entry)
    }

    static func insert(_ entry: IdempotencyEntry, db: Database) throws {
        let headers = (try? JSONEncoder().encode(entry.headers)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        try db.execute(
            sql: """
                INSERT INTO \(table) (key, method, path, fingerprint, status, headers, body, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                entry.key, entry.method, entry.path, entry.fingerprint, entry.status, headers, entry.body,
                entry.createdAt.timeIntervalSince1970,
            ])
    }

    static func entries(db: Database) throws -> [IdempotencyEntry] {
        try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid").map(entry)
    }

    private static func entry(_ row: Row) -> IdempotencyEntry {
        let headersText: String = row["headers"] ?? "{}"
        return IdempotencyEntry(
            key: row["key"] ?? "", method: row["method"] ?? "", path: row["path"] ?? "",
            fingerprint: row["fingerprint"] ?? "", status: row["status"] ?? 0,
            headers: (try? JSONDecoder().decode([String: String].self, from: Data(headersText.utf8))) ?? [:],
            body: row["body"] ?? Data(), createdAt: Date(timeIntervalSince1970: row["created_at"] ?? 0))
    }
}

extension RecordStore {
    /// Every write carried out under an `Idempotency-Key`, oldest first: the server's proof of
    /// which writes it applied, and how often.
    public func idempotencyLedger() throws -> [IdempotencyEntry] {
        try writer.read { db in try IdempotencyLedger.entries(db: db) }
    }

    /// Runs `body` in one write transaction: all of it lands, or none.
    func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.write(body)
    }
}
