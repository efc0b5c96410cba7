import BenchPayload
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A loopback Hummingbird server for the transport benchmarks: `/train` answers the one-record
/// payload, `/count` counts requests after a short delay.
final class RequestCounter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

final class BenchServer: Sendable {
    let port: Int
    let counter: RequestCounter

    init(port: Int, counter: RequestCounter) {
        self.port = port
        self.counter = counter
    }

    var count: Int { counter.count }

    static let shared = Task { try await BenchServer.start() }

    static func start() async throws -> BenchServer {
        let counter = RequestCounter()
        let router = Router()
        let body = ByteBuffer(bytes: Payload.train1)
        router.get("/train") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        router.get("/count") { _, _ in
            counter.increment()
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
            return BenchServer(port: port, counter: counter)
        }
        throw CancellationError()
    }
}
