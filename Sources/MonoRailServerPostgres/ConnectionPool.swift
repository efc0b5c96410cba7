import Dispatch
import Logging
import MonoRailTransport
import NIOCore
import PostgresNIO

/// Up to `capacity` PostgreSQL connections, opened as needed and kept; a caller waits (blocking its
/// thread, as the store's synchronous transactions do) until one is free.
///
/// Its calls block on PostgresNIO futures, so none may run on one of `group`'s event loops: the
/// pool's group is its own.
final class ConnectionPool: Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var nextID = 0
        var isClosed = false
    }

    private let state = Locked(State())
    /// One permit per connection that may be open.
    private let permits: DispatchSemaphore
    private let configuration: PostgresConnection.Configuration
    private let group: any EventLoopGroup
    private let logger: Logger

    init(configuration: PostgresConnection.Configuration, capacity: Int, group: any EventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.group = group
        self.logger = logger
        permits = DispatchSemaphore(value: max(1, capacity))
    }

    /// Runs `body` with a connection of its own; a connection that broke on the way is closed, not
    /// handed to the next caller.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        permits.wait()
        defer { permits.signal() }
        let (reused, id, isClosed) = state.withLock { state -> (PostgresConnection?, Int, Bool) in
            state.nextID += 1
            // Connections the server closed while they sat here are dropped (the pool is theirs).
            state.idle.removeAll { $0.isClosed }
            return (state.idle.popLast(), state.nextID, state.isClosed)
        }
        guard !isClosed else { throw ClosedStoreError() }
        let connection =
            try reused
            ?? PostgresConnection.connect(on: group.next(), configuration: configuration, id: id, logger: logger)
            .wait()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkIn(_ connection: PostgresConnection) {
        let keep = state.withLock { state in
            guard !state.isClosed, !connection.isClosed else { return false }
            state.idle.append(connection)
            return true
        }
        if !keep { try? connection.close().wait() }
    }

    /// The store was closed (its server stopped) and opens no connection.
    struct ClosedStoreError: Error, CustomStringConvertible {
        var description: String { "the record store was closed" }
    }

    /// Closes the idle connections, and each busy one as it comes back.
    func close() {
        let idle = state.withLock { state in
            state.isClosed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle { try? connection.close().wait() }
    }
}
