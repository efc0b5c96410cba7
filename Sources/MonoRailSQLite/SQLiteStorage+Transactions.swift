import Foundation
import GRDB
import MonoRail
import MonoRailTransport

// Transactions: writes committed in the background, in order, several to a transaction.
extension SQLiteStorage {
    func reading<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.read(body)
        } catch let error as DatabaseError {
            throw StorageFile.classify(error, path: path)
        }
    }

    /// One write transaction, which also records the uses since the last one; `body` gets the use
    /// stamp of what it writes.
    func writing(_ body: @escaping @Sendable (Database, Int64) throws -> Void) async throws {
        let (use, taken) = uses.withLock { uses in (uses.tick(), uses.take()) }
        let (records, queries) = taken
        let marksOpen = !sessionOpen.withLock { $0 }
        do {
            try await pool.write { db in
                // The first write of a session marks the file open, in the same commit.
                if marksOpen { try db.execute(sql: "UPDATE total SET session_open = 1") }
                if !records.isEmpty {
                    let statement = try db.cachedStatement(
                        sql: "UPDATE record SET used_at = ? WHERE model = ? AND id = ? AND used_at < ?")
                    for (key, used) in records { try statement.execute(arguments: [used, key.model, key.id, used]) }
                }
                for (key, used) in queries {
                    try db.execute(
                        sql: "UPDATE query SET used_at = ? WHERE model = ? AND key = ? AND used_at < ?",
                        arguments: [used, key.model, key.key, used])
                }
                try body(db, use)
            }
            if marksOpen { sessionOpen.withLock { $0 = true } }
        } catch let error as DatabaseError {
            throw StorageFile.classify(error, path: path)
        }
    }
}
