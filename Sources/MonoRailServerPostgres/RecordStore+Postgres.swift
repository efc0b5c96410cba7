public import Logging
public import MonoRailServer

extension RecordStore {
    /// Opens the store on a PostgreSQL database, creating its tables (once, however many
    /// processes start together) and seeding it when it is empty.
    ///
    /// Every process opened on the same database serves the same records and the same change log:
    /// a client of any of them gets every change once, in commit order.
    ///
    /// - Parameters:
    ///   - schema: The resources.
    ///   - location: The database, e.g. `try PostgresLocation(url: "postgres://monorail@localhost/monorail")`.
    ///   - maxConnections: How many connections this process opens at most.
    ///   - changeRetention: How many changes the change log keeps.
    ///   - logger: Where connection problems are logged.
    /// - Throws: ``SchemaError``, or PostgresNIO's `PSQLError` when the database cannot be reached
    ///   or refuses the tables.
    public convenience init(
        schema: ServerSchema, location: PostgresLocation, maxConnections: Int = 8, changeRetention: Int = 100_000,
        logger: Logger = Logger(label: "MonoRailServerPostgres")
    ) throws {
        try self.init(
            schema: schema,
            database: PostgresRecordDatabase(location: location, maxConnections: maxConnections, logger: logger),
            changeRetention: changeRetention)
    }
}
