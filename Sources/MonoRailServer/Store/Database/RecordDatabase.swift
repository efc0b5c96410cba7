/// Where a ``RecordStore`` keeps its records: SQLite through GRDB in this module, PostgreSQL in
/// MonoRailServerPostgres. The store's SQL is the same on both, written against ``SQLConnection``.
package protocol RecordDatabase: Sendable {
    /// How the database spells what SQLite and PostgreSQL spell differently.
    var dialect: SQLDialect { get }

    /// Runs `body` on a connection that reads committed data.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T

    /// Runs `body` in one write transaction: all of it commits, or none when it throws.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T

    /// Whether `error` is a unique key refusing a row that another transaction committed while
    /// this one ran: worth running again, when it will find that row. Never so on a database only
    /// one process writes, one transaction at a time.
    func isConflict(_ error: any Error) -> Bool

    /// Calls `committed` with the id of each change other processes commit to the change log, as
    /// far as the database can tell (a wake-up hint: the log is read for what happened); a database
    /// only this process writes never calls it.
    func observeChanges(_ committed: @escaping @Sendable (Int64) -> Void)

    /// Lets go of connections and stops observing; the database is not used after.
    func close()
}
