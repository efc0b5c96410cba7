import Foundation
import GRDB
import MonoRail
import MonoRailTransport

// Sizes and eviction: the file kept under its byte limit, least recently read first, pins kept.
extension SQLiteStorage {
    /// The bytes the records and queries kept take up, as counted against ``maxBytes``, once every
    /// write is committed.
    public var byteCount: Int {
        get async throws {
            try await flush()
            return try reading { db in try Int.fetchOne(db, sql: "SELECT bytes FROM total") ?? 0 }
        }
    }

    /// The number of records kept, once every write is committed.
    public var count: Int {
        get async throws {
            try await flush()
            return try reading { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record") ?? 0 }
        }
    }

    static func size(of record: StoredRecord) -> Int {
        record.body.count + record.key.model.utf8.count + record.key.id.utf8.count + (record.etag?.utf8.count ?? 0)
            + (record.lastModified?.utf8.count ?? 0) + 48
    }

    /// Removes the least recently used records and queries that are not pinned until they take up
    /// nine tenths of ``maxBytes``, so a full cache does not evict on every write.
    func evictIfFull(_ db: Database) throws {
        guard let maxBytes else { return }
        var total = try Int.fetchOne(db, sql: "SELECT bytes FROM total") ?? 0
        guard total > maxBytes else { return }
        let target = maxBytes / 10 * 9
        let deleteRecord = try db.cachedStatement(sql: "DELETE FROM record WHERE model = ? AND id = ?")
        let deleteQuery = try db.cachedStatement(sql: "DELETE FROM query WHERE model = ? AND key = ?")
        while total > target {
            let oldest = try Row.fetchAll(
                db,
                sql: """
                    SELECT 0, model, id, size, used_at FROM record
                        WHERE NOT EXISTS (SELECT 1 FROM pin WHERE pin.model = record.model AND pin.id = record.id)
                    UNION ALL SELECT 1, model, key, size, used_at FROM query
                    ORDER BY used_at LIMIT 256
                    """)
            if oldest.isEmpty { break }
            for row in oldest {
                guard total > target else { break }
                let isQuery: Bool = row[0]
                let model: String = row[1]
                let id: String = row[2]
                try (isQuery ? deleteQuery : deleteRecord).execute(arguments: [model, id])
                total -= row[3]
            }
        }
    }
}
