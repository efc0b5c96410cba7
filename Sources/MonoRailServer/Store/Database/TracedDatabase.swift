import Foundation
import Tracing

/// A ``RecordDatabase`` whose statements are spans, children of the span current where the read or
/// write began (the request's, with the server's tracing middleware): one trace from the app's
/// action to the SQL it caused.
///
/// Each span is named `SELECT trains` (OpenTelemetry's `{db.operation.name} {db.collection.name}`)
/// and carries `db.system.name`, `db.operation.name`, `db.collection.name` and `db.query.text` — the
/// statement with its `?` placeholders, never the values. With no tracer, the connection is the
/// database's own.
struct TracedDatabase: RecordDatabase {
    let base: any RecordDatabase

    var dialect: SQLDialect { base.dialect }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        // Found here, in the caller's task: the database may run `body` on a thread of its own.
        guard let tracer = Self.tracer else { return try base.read(body) }
        let parent = InstrumentationContext.current ?? .topLevel
        return try base.read { try body(TracedConnection(base: $0, tracer: tracer, parent: parent)) }
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        guard let tracer = Self.tracer else { return try base.write(body) }
        let parent = InstrumentationContext.current ?? .topLevel
        return try base.write { try body(TracedConnection(base: $0, tracer: tracer, parent: parent)) }
    }

    func isConflict(_ error: any Error) -> Bool { base.isConflict(error) }

    func observeChanges(_ committed: @escaping @Sendable (Int64) -> Void) { base.observeChanges(committed) }

    func close() { base.close() }

    /// The tracer of the task (`withTracer`) or the process; `nil` when none records.
    private static var tracer: (any Tracer)? {
        let tracer = InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }
}

/// A connection whose every statement is a span.
private struct TracedConnection: SQLConnection {
    let base: any SQLConnection
    let tracer: any Tracer
    let parent: InstrumentationContext

    var dialect: SQLDialect { base.dialect }

    func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let (operation, collection) = Self.summary(of: sql)
        let span = tracer.startSpan(
            collection.map { "\(operation) \($0)" } ?? operation, context: parent, ofKind: .client)
        span.attributes["db.system.name"] = dialect.engine == .postgres ? "postgresql" : "sqlite"
        span.attributes["db.operation.name"] = operation
        if let collection { span.attributes["db.collection.name"] = collection }
        span.attributes["db.query.text"] = sql
        defer { span.end() }
        do {
            let rows = try base.fetchAll(sql, arguments)
            span.attributes["db.response.returned_rows"] = rows.count
            return rows
        } catch {
            span.attributes["error.type"] = String(describing: type(of: error))
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    func afterCommit(_ action: @escaping @Sendable () -> Void) { base.afterCommit(action) }

    /// The statement's first word and the table it names first: `SELECT` and `trains` for
    /// `SELECT * FROM "trains" WHERE …`; no table for what names none where expected.
    static func summary(of sql: String) -> (operation: String, collection: String?) {
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "(" })
        let operation = words.first.map { $0.uppercased() } ?? "SQL"
        let marker: String? =
            switch operation {
            case "SELECT", "DELETE": "FROM"
            case "INSERT": "INTO"
            case "UPDATE": ""
            default: nil
            }
        guard let marker else { return (operation, nil) }
        let index =
            marker.isEmpty ? 1 : (words.firstIndex { $0.uppercased() == marker }.map { $0 + 1 } ?? words.endIndex)
        guard index < words.endIndex else { return (operation, nil) }
        let name = words[index].trimmingCharacters(in: ["\"", "`", ",", ";", ")"])
        return (operation, name.isEmpty ? nil : name)
    }
}
