public import Foundation
import Hummingbird
import Logging
import MonoRailTransport
import NIOCore

/// A Hummingbird server on 127.0.0.1 with endpoints that produce every response the client tests need:
/// echoes, canned statuses and bodies, delays, truncated bodies, redirects, flaky endpoints and counters.
///
/// Servers are started once per process and never stopped: tests share them and use unique keys for
/// anything they count.
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }
    let state: ServerState

    init(port: Int, state: ServerState) {
        self.port = port
        self.state = state
    }

    /// The number of requests the server has seen for a counter key.
    public func count(_ key: String) -> Int {
        state.counts.withLock { $0[key] ?? 0 }
    }

    /// Whether a streamed response for `key` was abandoned by the client before it finished.
    public func wasAborted(_ key: String) -> Bool {
        state.aborted.withLock { $0.contains(key) }
    }

    /// The shared server.
    public static func shared() async throws -> TestServer {
        try await sharedServer.value
    }

    /// A second shared server, for cross-origin tests.
    public static func other() async throws -> TestServer {
        try await otherServer.value
    }

    /// Starts a new server on an ephemeral port.
    public static func start() async throws -> TestServer {
        let state = ServerState()
        let router = Router()
        Routes.install(on: router, state: state)
        let (port, _) = try await serve(router, name: "TestServer")
        return TestServer(port: port, state: state)
    }
}

/// Serves `router` on 127.0.0.1 on an ephemeral port, in the background.
///
/// - Returns: The port once the server listens, and the task serving (cancel it to stop).
func serve(_ router: Router<BasicRequestContext>, name: String) async throws -> (Int, Task<Void, any Error>) {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    var logger = Logger(label: name)
    logger.logLevel = .critical
    let app = Application(
        router: router,
        configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: name),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        },
        logger: logger)
    let task = Task { try await app.runService(gracefulShutdownSignals: []) }
    for await port in stream {
        return (port, task)
    }
    throw CancellationError()
}

private let sharedServer = Task { try await TestServer.start() }
private let otherServer = Task { try await TestServer.start() }

final class ServerState: Sendable {
    let counts = Locked<[String: Int]>([:])
    let aborted = Locked<Set<String>>([])
    /// Created trains, stored as JSON text so the storage is Sendable.
    let trains = Locked<[Data]>([])

    @discardableResult
    func increment(_ key: String) -> Int {
        counts.withLock { table in
            table[key, default: 0] += 1
            return table[key] ?? 0
        }
    }
}

/// Waits until `condition` holds, checking every 20 ms for at most `limit`: a bound on waiting for
/// something another task or the server does, not a timing assertion. Generous, because on two
/// busy cores (the 100 MB upload test runs two processes at once) a task can wait seconds for CPU.
public func eventually(within limit: Duration = .seconds(30), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
