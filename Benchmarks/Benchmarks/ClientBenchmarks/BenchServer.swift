import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A loopback Hummingbird server for the transport benchmarks: `/train` answers the one-record
/// payload, `/count` counts requests after a short delay.
final class BenchServer: Sendable {
    let port: Int
    let counter: Mutex<Int>

    init(port: Int, counter: Mutex<Int>) {
        self.port = port
        self.counter = counter
    }

    var count: Int { counter.withLock { $0 } }

    static let shared = Task { try await BenchServer.start() }

    static func start() async throws -> BenchServer {
        let server = BenchServer(port: 0, counter: Mutex(0))
        let router = Router()
        let body = ByteBuffer(bytes: Payload.train1)
        router.get("/train") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        let counter = server
        router.get("/count") { _, _ in
            counter.counter.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(200))
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger)
        Task { try await app.runService(gracefulShutdownSignals: []) }
        for await port in stream {
            return BenchServer(port: port, counter: server.counter)
        }
        throw CancellationError()
    }
}
