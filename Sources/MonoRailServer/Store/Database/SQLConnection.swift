/// What the record store's SQL runs on, inside one ``RecordDatabase`` read or write: statements with
/// `?` placeholders, in the connection's ``SQLDialect``.
package protocol SQLConnection {
    /// How this database spells what SQLite and PostgreSQL spell differently.
    var dialect: SQLDialect { get }

    /// Runs a statement and returns its rows (none for most writes; `RETURNING` gives some).
    func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]

    /// Runs `action` once the write transaction this connection is in commits; never when it rolls
    /// back.
    func afterCommit(_ action: @escaping @Sendable () -> Void)
}

extension SQLConnection {
    /// Runs a statement with no arguments and returns its rows.
    package func fetchAll(_ sql: String) throws -> [SQLRow] {
        try fetchAll(sql, [])
    }

    /// Runs a statement, ignoring any rows.
    package func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        _ = try fetchAll(sql, arguments)
    }

    /// The first row, if any.
    package func fetchOne(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLRow? {
        try fetchAll(sql, arguments).first
    }

    /// The first column of the first row; `.null` when there is no row.
    package func fetchValue(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue {
        try fetchOne(sql, arguments)?[0] ?? .null
    }
}
