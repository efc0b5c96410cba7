/// What SQLite and PostgreSQL spell differently, for the statements the record store writes.
package struct SQLDialect: Sendable, Hashable {
    /// A column's storage class, as the store thinks of it.
    package enum ColumnType: Sendable, Hashable {
        case text, integer, real, blob
    }

    package enum Engine: Sendable, Hashable {
        case sqlite, postgres
    }

    package var engine: Engine

    /// SQLite, as GRDB opens it.
    package static let sqlite = SQLDialect(engine: .sqlite)
    /// PostgreSQL 12 or later.
    package static let postgres = SQLDialect(engine: .postgres)

    /// The column type's name.
    package func name(_ type: ColumnType) -> String {
        switch (engine, type) {
        case (_, .text): "TEXT"
        case (.sqlite, .integer): "INTEGER"
        case (.postgres, .integer): "BIGINT"
        case (.sqlite, .real): "REAL"
        case (.postgres, .real): "DOUBLE PRECISION"
        case (.sqlite, .blob): "BLOB"
        case (.postgres, .blob): "BYTEA"
        }
    }

    /// An integer key the database assigns, increasing.
    package var generatedKey: String {
        engine == .sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGSERIAL PRIMARY KEY"
    }

    /// A column every table of records has for insertion order, when the database has none of its
    /// own (SQLite's `rowid`); read by ``insertionOrder``, never sent to clients.
    package var insertionOrderColumn: String? {
        engine == .sqlite ? nil : "monorail_row"
    }

    /// What to order by for the order records were inserted in.
    package var insertionOrder: String {
        insertionOrderColumn.map { "\"\($0)\"" } ?? "rowid"
    }

    /// A case-insensitive `LIKE` (SQLite's is one already for ASCII).
    package var caseInsensitiveLike: String {
        engine == .sqlite ? "LIKE" : "ILIKE"
    }

    /// Appended to a read inside a write transaction that goes on to change the row, so that a
    /// concurrent write to it waits (SQLite has one writer and needs none).
    package var lockingRead: String {
        engine == .sqlite ? "" : " FOR UPDATE"
    }

    /// A query of the names of a table's columns, the table's name its one argument.
    package var columnNamesQuery: String {
        switch engine {
        case .sqlite: "SELECT name FROM pragma_table_info(?)"
        case .postgres:
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
        }
    }

    /// A statement that makes every other writer wait, until this transaction ends, before it
    /// appends to the same log: so log ids are in commit order however many processes write.
    /// SQLite has one writer at a time and needs none.
    package func serializingStatement(key: Int64) -> String? {
        engine == .sqlite ? nil : "SELECT pg_advisory_xact_lock(\(key))"
    }
}
