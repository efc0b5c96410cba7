import Foundation
import GRDB
public import MonoRail
import MonoRailTransport

// Reads: records and stored queries, those written and not yet committed first. A read writes
// nothing; the uses it makes are noted and written with the next write.
extension SQLiteStorage {
    /// The stored records among `keys`, those not yet committed included.
    public func records(_ keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] {
        let ordered = try await records(inOrderOf: keys)
        var found: [RecordKey: StoredRecord] = [:]
        found.reserveCapacity(keys.count)
        for record in ordered {
            if let record { found[record.key] = record }
        }
        return found
    }

    /// The stored records among `keys`, in their order, those not yet committed included. Many keys
    /// of a model are one statement that SQLite walks in the keys' order, each found by the primary
    /// key: nothing is hashed or sorted on this side.
    public func records(inOrderOf keys: [RecordKey]) async throws -> [StoredRecord?] {
        var found = [StoredRecord?](repeating: nil, count: keys.count)
        // The places of the keys not written since the last commit, by model.
        var missing: [String: [Int]] = [:]
        // The places of records written and not yet committed: laid over the file's copy, as the
        // commit will lay them.
        var queued: [Int] = []
        pending.withLock { pending in
            for (index, key) in keys.enumerated() {
                if let record = pending.records.isEmpty ? nil : pending.records[key] {
                    found[index] = record
                    queued.append(index)
                } else {
                    missing[key.model, default: []].append(index)
                }
            }
        }
        try reading { db in
            for (model, places) in missing {
                if places.count > 16 {
                    try readMany(model, places, of: keys, into: &found, db)
                } else {
                    try readFew(places, of: keys, into: &found, db)
                }
            }
            guard !queued.isEmpty else { return }
            let statement = try db.cachedStatement(
                sql: "SELECT body, fetched_at, fetch_order FROM record WHERE model = ? AND id = ?")
            for index in queued {
                guard let record = found[index], let older = try Self.stored(keys[index], statement),
                    let merged = record.laid(over: older)
                else { continue }
                found[index] = merged
            }
        }
        let allFound = !found.contains { $0 == nil }
        uses.withLock { $0.note(allFound ? keys : found.compactMap { $0?.key }) }
        return found
    }

    /// Many records of one model: the ids as a JSON array that SQLite walks (`json_each`), each row
    /// carrying its id's place in it.
    private func readMany(
        _ model: String, _ places: [Int], of keys: [RecordKey], into found: inout [StoredRecord?], _ db: Database
    ) throws {
        let statement = try db.cachedStatement(
            sql: """
                SELECT j.key, r.body, r.fetched_at, r.etag, r.last_modified, r.fetch_order
                FROM json_each(?) AS j CROSS JOIN record AS r ON r.model = ? AND r.id = j.value
                """)
        let ids = String(decoding: JSONWriter.serialize(.array(places.map { .string(keys[$0].id) })), as: UTF8.self)
        let rows = try Row.fetchCursor(statement, arguments: [ids, model])
        while let row = try rows.next() {
            let offset: Int = row[0]
            guard places.indices.contains(offset) else { continue }
            let place = places[offset]
            found[place] = StoredRecord(
                key: keys[place], body: row[1], fetchedAt: Date(timeIntervalSinceReferenceDate: row[2]),
                order: row[5], etag: row[3], lastModified: row[4])
        }
    }

    /// A few records, each found by its key.
    private func readFew(_ places: [Int], of keys: [RecordKey], into found: inout [StoredRecord?], _ db: Database)
        throws
    {
        let statement = try db.cachedStatement(
            sql: "SELECT body, fetched_at, etag, last_modified, fetch_order FROM record WHERE model = ? AND id = ?")
        for place in places {
            let key = keys[place]
            guard let row = try Row.fetchOne(statement, arguments: [key.model, key.id]) else { continue }
            found[place] = StoredRecord(
                key: key, body: row[0], fetchedAt: Date(timeIntervalSinceReferenceDate: row[1]), order: row[4],
                etag: row[2], lastModified: row[3])
        }
    }

    /// The stored answer to a read.
    public func query(_ key: QueryKey) async throws -> StoredQuery? {
        if let queued = pending.withLock({ $0.queries[key] }) { return queued }
        let stored = try reading { db -> StoredQuery? in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT ids, related, fetched_at, etag, last_modified, fetch_order FROM query
                            WHERE model = ? AND key = ?
                            """
                    ),
                    arguments: [key.model, key.key])
            else { return nil }
            return StoredQuery(
                key: key, ids: try KeyList.decode(row[0]), related: try KeyList.decodeKeys(row[1]),
                fetchedAt: Date(timeIntervalSinceReferenceDate: row[2]), order: row[5], etag: row[3],
                lastModified: row[4])
        }
        if stored != nil { uses.withLock { $0.note(key) } }
        return stored
    }
}
