import Logging
import MonoRailServer
import MonoRailTransport
import NIOCore
import PostgresNIO

/// A connection that `LISTEN`s for the change log's notifications and passes on each commit's id,
/// connecting again a second after it is lost; once (re)connected, it passes on the newest id in the
/// log, for the changes committed while it was away.
final class ChangeListener: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var isClosed = false
        var attempt = 0
    }

    private let state = Locked(State())
    private let configuration: PostgresConnection.Configuration
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let committed: @Sendable (Int64) -> Void

    init(
        configuration: PostgresConnection.Configuration, eventLoop: any EventLoop, logger: Logger,
        committed: @escaping @Sendable (Int64) -> Void
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        self.committed = committed
    }

    func start() {
        let attempt = state.withLock { state -> Int? in
            guard !state.isClosed else { return nil }
            state.attempt += 1
            return state.attempt
        }
        guard let attempt else { return }
        let (committed, logger) = (self.committed, self.logger)
        PostgresConnection.connect(on: eventLoop, configuration: configuration, id: -attempt, logger: logger)
            .flatMap { connection -> EventLoopFuture<Void> in
                let isClosed = self.state.withLock { state in
                    if !state.isClosed { state.connection = connection }
                    return state.isClosed
                }
                guard !isClosed else { return connection.close() }
                connection.closeFuture.whenComplete { _ in self.startAgain() }
                connection.addListener(channel: ChangeLog.channel) { _, notification in
                    if let id = Int64(notification.payload) { committed(id) }
                }
                return connection.query(PostgresQuery(unsafeSQL: "LISTEN \(ChangeLog.channel)"), logger: logger)
                    .flatMap { _ in
                        connection.query(
                            PostgresQuery(unsafeSQL: "SELECT MAX(id) FROM \(ChangeLog.table)"), logger: logger)
                    }
                    .map { result in
                        if let cell = result.rows.first?.first,
                            case .integer(let newest)? = try? PostgresSession.value(of: cell)
                        {
                            committed(newest)
                        }
                    }
            }
            .whenFailure { error in
                logger.debug("listening for changes failed: \(error)")
                self.startAgain()
            }
    }

    private func startAgain() {
        let isClosed = state.withLock { state in
            state.connection = nil
            return state.isClosed
        }
        guard !isClosed else { return }
        eventLoop.scheduleTask(in: .seconds(1)) { self.start() }
    }

    /// Stops listening, and waits until the connection is closed. Not on the listener's event loop.
    func close() {
        let connection = state.withLock { state in
            state.isClosed = true
            return state.connection
        }
        try? connection?.close().wait()
    }
}
