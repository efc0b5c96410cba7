import Foundation
import Logging
import MonoRailServer
import MonoRailTransport
import NIOCore
import NIOPosix
import PostgresNIO

/// The reference server's records in PostgreSQL, shared by every `monorail serve` process pointed at
/// the same database.
///
/// Transactions run at PostgreSQL's default isolation (read committed); a row a write goes on to
/// change is read `FOR UPDATE`, and the change log is appended under an advisory lock held to commit
/// (``SQLDialect/serializingStatement(key:)``), so change ids are in commit order across processes.
/// Each commit also sends `NOTIFY monorail_changes`: every process listens and wakes its streams,
/// which then read the log; a notification missed while the listening connection was down is
/// made up for by reading the newest id when it is back.
final class PostgresRecordDatabase: RecordDatabase {
    private let configuration: PostgresConnection.Configuration
    private let group: MultiThreadedEventLoopGroup
    private let pool: ConnectionPool
    private let logger: Logger
    private let listener = Locked<ChangeListener?>(nil)

    init(location: PostgresLocation, maxConnections: Int, logger: Logger) throws {
        self.logger = logger
        configuration = try location.configuration()
        // Its own event loop: the pool blocks on futures, which must never be on the loop that
        // completes them.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        pool = ConnectionPool(configuration: configuration, capacity: maxConnections, group: group, logger: logger)
    }

    var dialect: SQLDialect { .postgres }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try withSession { session in try body(session) }
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        let (result, committed) = try withSession { session in
            try session.execute("BEGIN")
            do {
                let result = try body(session)
                try session.execute("COMMIT")
                return (result, session.committedActions)
            } catch {
                // A failed statement leaves the transaction aborted; a connection that broke is
                // dropped by the pool either way.
                _ = try? session.execute("ROLLBACK")
                throw error
            }
        }
        for action in committed { action() }
        return result
    }

    /// Runs `body` on a pooled connection; again on a new one when its first statement finds the
    /// connection closed, as every pooled connection is after the server restarts.
    private func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        do {
            return try pool.withConnection { connection in
                try body(PostgresSession(connection: connection, logger: logger))
            }
        } catch let stale as PostgresSession.StaleConnection {
            logger.debug("a pooled connection was closed (\(stale)); using a new one")
            do {
                return try pool.withConnection { connection in
                    try body(PostgresSession(connection: connection, logger: logger))
                }
            } catch let again as PostgresSession.StaleConnection {
                throw again.underlying ?? again
            }
        }
    }

    /// `unique_violation`: under read committed, an insert waits for a concurrent one of the same
    /// key to commit, then fails.
    func isConflict(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    func observeChanges(_ committed: @escaping @Sendable (Int64) -> Void) {
        let listener = ChangeListener(
            configuration: configuration, eventLoop: group.next(), logger: logger, committed: committed)
        self.listener.withLock { $0 = listener }
        listener.start()
    }

    func close() {
        listener.withLock { $0 }?.close()
        pool.close()
        try? group.syncShutdownGracefully()
    }
}
