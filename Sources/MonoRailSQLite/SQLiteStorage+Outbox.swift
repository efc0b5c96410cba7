import Foundation
import GRDB
public import MonoRail

/// The outbox in the same file as the records: each write is committed before the app is told it is
/// kept, so it survives a crash or `kill -9`, and settling a write (removing it, rewriting the local
/// ids of later ones) is one transaction.
extension SQLiteStorage: OutboxStorage {
    /// Every kept write, in order. A row this version cannot read (a damaged file, a write kept by a
    /// later version) is a write parked with the reason (its `isUnreadable` flag set), which is never
    /// sent: the others still flow, and the app sees it in ``/MonoRail/Outbox/parked`` to discard it.
    public func pendingWrites() throws -> [PendingWrite] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY sequence").compactMap { row in
                do {
                    return try write(from: row)
                } catch {
                    return unreadableWrite(from: row, error)
                }
            }
        }
    }

    /// What can be told of a row that cannot be read as a write: its place, model and record if
    /// those can be read, parked with why the rest could not.
    private func unreadableWrite(from row: Row, _ error: any Error) -> PendingWrite? {
        guard let sequence = try? row.decode(Int64.self, forColumn: "sequence") else { return nil }
        let reason = (error as? SQLiteStorageError)?.message ?? "\(error)"
        var write = PendingWrite(
            sequence: sequence, idempotencyKey: (try? row.decode(String.self, forColumn: "idempotency_key")) ?? "",
            model: (try? row.decode(String.self, forColumn: "model")) ?? "", verb: .update,
            id: (try? row.decode(String?.self, forColumn: "id")).flatMap { $0.map(ResourceID.string) }, body: nil,
            fields: [],
            parking: PendingWrite.Parking(
                code: .decodingFailed, statusCode: nil,
                message: "kept write \(sequence) cannot be read from the storage file: \(reason); it is not sent"))
        write.isUnreadable = true
        return write
    }

    /// Keeps a write; committed when this returns.
    public func enqueue(_ write: PendingWrite) async throws {
        let row = Self.arguments(of: write)
        try await writing { db, _ in
            // Cached: an app keeping writes one by one parses this once.
            try db.cachedStatement(
                sql: """
                    INSERT INTO outbox (sequence, idempotency_key, model, verb, id, id_is_text, body, fields, if_match,
                        waits_for_if_match, created_at, attempts, failures, parked_code, parked_status, parked_message,
                        parked_at, model_type, batch, trace_context)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: row)
        }
    }

    /// Forgets and rewrites writes in one transaction.
    public func settle(removing removed: [Int64], updating updated: [PendingWrite]) async throws {
        let rows = updated.map(Self.arguments(of:))
        try await writing { db, _ in
            for sequence in removed {
                try db.execute(sql: "DELETE FROM outbox WHERE sequence = ?", arguments: [sequence])
            }
            for row in rows {
                try db.execute(
                    sql: """
                        UPDATE outbox SET idempotency_key = ?2, model = ?3, verb = ?4, id = ?5, id_is_text = ?6,
                            body = ?7, fields = ?8, if_match = ?9, waits_for_if_match = ?10, created_at = ?11,
                            attempts = ?12, failures = ?13, parked_code = ?14, parked_status = ?15,
                            parked_message = ?16, parked_at = ?17, model_type = ?18, batch = ?19,
                            trace_context = ?20
                        WHERE sequence = ?1
                        """,
                    arguments: row)
            }
        }
    }

    private static func arguments(of write: PendingWrite) -> StatementArguments {
        let fields = JSONValue.array(write.fields.map(JSONValue.string))
        let isText: Bool = if case .string = write.id { true } else { false }
        return [
            write.sequence, write.idempotencyKey, write.model, write.verb.rawValue, write.id?.description, isText,
            write.body.map { String(decoding: $0.jsonData(sortedKeys: true), as: UTF8.self) },
            String(decoding: fields.jsonData(), as: UTF8.self), write.ifMatch, write.waitsForIfMatch,
            write.createdAt.timeIntervalSinceReferenceDate, write.attempts, write.failures,
            write.parking?.code.description, write.parking?.statusCode, write.parking?.message,
            write.parking?.parkedAt.timeIntervalSinceReferenceDate, write.modelType, write.batch,
            write.traceContext.map { fields in
                String(
                    decoding: JSONValue.object(fields.mapValues(JSONValue.string)).jsonData(sortedKeys: true),
                    as: UTF8.self)
            },
        ]
    }

    private func write(from row: Row) throws -> PendingWrite {
        let verbText = try row.decode(String.self, forColumn: "verb")
        guard let verb = ActionVerb(rawValue: verbText) else {
            throw SQLiteStorageError(
                .failed, path: path, "the outbox holds a write with an unknown verb \"\(verbText)\"")
        }
        let idText = try row.decode(String?.self, forColumn: "id")
        let isText = try row.decode(Bool.self, forColumn: "id_is_text")
        let id = idText.map { text in
            isText ? ResourceID.string(text) : Int64(text).map(ResourceID.int) ?? .string(text)
        }
        let bodyText = try row.decode(String?.self, forColumn: "body")
        let fieldsText = try row.decode(String.self, forColumn: "fields")
        let fields = (try? JSONParser().parse(Data(fieldsText.utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        let body: JSONValue?
        do {
            body = try bodyText.map { try JSONParser().parse(Data($0.utf8)) }
        } catch {
            throw SQLiteStorageError(.failed, path: path, "its body is not JSON (\(error))")
        }
        return PendingWrite(
            sequence: try row.decode(Int64.self, forColumn: "sequence"),
            idempotencyKey: try row.decode(String.self, forColumn: "idempotency_key"),
            model: try row.decode(String.self, forColumn: "model"),
            modelType: try row.decode(String?.self, forColumn: "model_type"), verb: verb,
            id: id, body: body, fields: fields,
            ifMatch: try row.decode(String?.self, forColumn: "if_match"),
            waitsForIfMatch: try row.decode(Bool.self, forColumn: "waits_for_if_match"),
            createdAt: Date(timeIntervalSinceReferenceDate: try row.decode(Double.self, forColumn: "created_at")),
            attempts: try row.decode(Int.self, forColumn: "attempts"),
            failures: try row.decode(Int.self, forColumn: "failures"), parking: try parking(from: row),
            batch: try row.decode(String?.self, forColumn: "batch"), traceContext: traceContext(from: row))
    }

    /// The kept trace context's fields; anything but an object of strings (a damaged file) is none:
    /// a link lost is not worth a write that cannot be read.
    private func traceContext(from row: Row) -> [String: String]? {
        guard let text = try? row.decode(String?.self, forColumn: "trace_context"),
            case .object(let members)? = try? JSONParser().parse(Data(text.utf8))
        else { return nil }
        let fields = members.compactMapValues(\.stringValue)
        return fields.isEmpty ? nil : fields
    }

    /// Why a stored write is parked; a code this version does not know reads as an HTTP status error.
    private func parking(from row: Row) throws -> PendingWrite.Parking? {
        guard let code = try row.decode(String?.self, forColumn: "parked_code") else { return nil }
        let parkedAt = try row.decode(Double?.self, forColumn: "parked_at")
        return PendingWrite.Parking(
            code: APIError.Code(name: code) ?? .httpStatus,
            statusCode: try row.decode(Int?.self, forColumn: "parked_status"),
            message: try row.decode(String?.self, forColumn: "parked_message") ?? "parked",
            parkedAt: Date(timeIntervalSinceReferenceDate: parkedAt ?? 0))
    }
}
