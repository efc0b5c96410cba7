import Foundation
import GRDB

/// Records in a SQLite file through GRDB (WAL for files, so readers never wait for writers), or in
/// a private in-memory database.
final class SQLiteRecordDatabase: RecordDatabase {
    private let writer: any DatabaseWriter

    /// Opens (or creates) the file at `path`, or an in-memory database for `:memory:`.
    init(path: String) throws {
        var configuration = Configuration()
        // Concurrent requests wait for the write lock instead of failing with "database is locked".
        configuration.busyMode = .timeout(10)
        if path == ":memory:" {
            writer = try DatabaseQueue(configuration: configuration)
        } else {
            writer = try DatabasePool(path: path, configuration: configuration)
        }
    }

    var dialect: SQLDialect { .sqlite }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try writer.read { db in try body(Connection(db: db)) }
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try writer.write { db in try body(Connection(db: db)) }
    }

    func isConflict(_ error: any Error) -> Bool { false }

    /// One process writes the file: its own commits signal the streams.
    func observeChanges(_ committed: @escaping @Sendable (Int64) -> Void) {}

    func close() {}

    private struct Connection: SQLConnection {
        let db: Database

        var dialect: SQLDialect { .sqlite }

        func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
            let statement = try db.makeStatement(sql: sql)
            try statement.setArguments(StatementArguments(arguments.map(\.databaseValue)))
            var rows: [SQLRow] = []
            let cursor = try Row.fetchCursor(statement)
            while let row = try cursor.next() {
                rows.append(SQLRow(row.map { ($0.0, SQLValue($0.1)) }))
            }
            return rows
        }

        func afterCommit(_ action: @escaping @Sendable () -> Void) {
            db.afterNextTransaction { _ in action() }
        }
    }
}

extension SQLValue {
    fileprivate init(_ value: DatabaseValue) {
        self =
            switch value.storage {
            case .null: .null
            case .int64(let int): .integer(int)
            case .double(let double): .real(double)
            case .string(let string): .text(string)
            case .blob(let data): .blob(data)
            }
    }

    fileprivate var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let int): int.databaseValue
        case .real(let double): double.databaseValue
        case .text(let string): string.databaseValue
        case .blob(let data): data.databaseValue
        }
    }
}
