import Foundation
import GRDB
public import MonoRail

/// The outbox in the same file as the records: each write is committed before the app is told it is
/// kept, so it survives a crash or `kill -9`, and settling a write (removing it, rewriting the local
/// ids of later ones) is one transaction.
extension SQLiteStorage: OutboxStorage {
    /// Every kept write, in order.
    public func pendingWrites() throws -> [PendingWrite] {
        try reading { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY sequence").map(write(from:))
        }
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
        let verbText: String = row["verb"]
        guard let verb = ActionVerb(rawValue: verbText) else {
            throw SQLiteStorageError(
                .failed, path: path, "the outbox holds a write with an unknown verb \"\(verbText)\"")
        }
        let idText: String? = row["id"]
        let isText: Bool = row["id_is_text"]
        let id = idText.map { text in
            isText ? ResourceID.string(text) : Int64(text).map(ResourceID.int) ?? .string(text)
        }
        let bodyText: String? = row["body"]
        let fieldsText: String = row["fields"]
        let fields = (try? JSONParser().parse(Data(fieldsText.utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        return PendingWrite(
            sequence: row["sequence"], idempotencyKey: row["idempotency_key"], model: row["model"],
            modelType: row["model_type"], verb: verb,
            id: id, body: try bodyText.map { try JSONParser().parse(Data($0.utf8)) }, fields: fields,
            ifMatch: row["if_match"], waitsForIfMatch: row["waits_for_if_match"],
            createdAt: Date(timeIntervalSinceReferenceDate: row["created_at"]),
            attempts: row["attempts"], failures: row["failures"], parking: parking(from: row), batch: row["batch"],
            traceContext: traceContext(from: row))
    }

    /// The kept trace context's fields; anything but an object of strings (a damaged file) is none:
    /// a link lost is not worth a write that cannot be read.
    private func traceContext(from row: Row) -> [String: String]? {
        guard let text: String = row["trace_context"],
            case .object(let members)? = try? JSONParser().parse(Data(text.utf8))
        else { return nil }
        let fields = members.compactMapValues(\.stringValue)
        return fields.isEmpty ? nil : fields
    }

    /// Why a stored write is parked; a code this version does not know reads as an HTTP status error.
    private func parking(from row: Row) -> PendingWrite.Parking? {
        guard let code: String = row["parked_code"] else { return nil }
        let parkedAt: Double? = row["parked_at"]
        return PendingWrite.Parking(
            code: APIError.Code(name: code) ?? .httpStatus, statusCode: row["parked_status"],
            message: row["parked_message"] ?? "parked",
            parkedAt: Date(timeIntervalSinceReferenceDate: parkedAt ?? 0))
    }
}
