public import Foundation

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

    static func create(in db: any SQLConnection) throws {
        let (integer, real, blob) = (db.dialect.name(.integer), db.dialect.name(.real), db.dialect.name(.blob))
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                key TEXT PRIMARY KEY NOT NULL,
                method TEXT NOT NULL,
                path TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                status \(integer) NOT NULL,
                headers TEXT NOT NULL,
                body \(blob) NOT NULL,
                created_at \(real) NOT NULL)
            """)
    }

    static func entry(_ key: String, db: any SQLConnection) throws -> IdempotencyEntry? {
        try db.fetchOne("SELECT * FROM \(table) WHERE key = ?", [.text(key)]).map(entry(from:))
    }

    static func insert(_ entry: IdempotencyEntry, db: any SQLConnection) throws {
        let headers = (try? JSONEncoder().encode(entry.headers)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        try db.execute(
            """
            INSERT INTO \(table) (key, method, path, fingerprint, status, headers, body, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(entry.key), .text(entry.method), .text(entry.path), .text(entry.fingerprint),
                .integer(Int64(entry.status)), .text(headers), .blob(entry.body),
                .real(entry.createdAt.timeIntervalSince1970),
            ])
    }

    static func entries(db: any SQLConnection) throws -> [IdempotencyEntry] {
        try db.fetchAll("SELECT * FROM \(table) ORDER BY created_at, key").map(entry(from:))
    }

    private static func entry(from row: SQLRow) -> IdempotencyEntry {
        let headersText = row["headers"].text ?? "{}"
        let body: Data =
            switch row["body"] {
            case .blob(let data): data
            case .text(let text): Data(text.utf8)
            default: Data()
            }
        let createdAt: Double =
            switch row["created_at"] {
            case .real(let seconds): seconds
            case .integer(let seconds): Double(seconds)
            default: 0
            }
        return IdempotencyEntry(
            key: row["key"].text ?? "", method: row["method"].text ?? "", path: row["path"].text ?? "",
            fingerprint: row["fingerprint"].text ?? "", status: Int(row["status"].integer ?? 0),
            headers: (try? JSONDecoder().decode([String: String].self, from: Data(headersText.utf8))) ?? [:],
            body: body, createdAt: Date(timeIntervalSince1970: createdAt))
    }
}

extension RecordStore {
    /// Every write carried out under an `Idempotency-Key`, oldest first: the server's proof of
    /// which writes it applied, and how often.
    public func idempotencyLedger() throws -> [IdempotencyEntry] {
        try database.read { db in try IdempotencyLedger.entries(db: db) }
    }

    /// Runs `body` in one write transaction: all of it lands, or none.
    func transaction<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try database.write(body)
    }
}
