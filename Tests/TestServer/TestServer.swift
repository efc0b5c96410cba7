public import Foundation
import Hummingbird
import MonoRailTesting
import MonoRailTransport

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
