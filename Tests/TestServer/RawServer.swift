public import Foundation
import MonoRailTransport
import NIOCore
import NIOPosix

/// A TCP server that answers every request with scripted bytes, resets and closes: for what no
/// HTTP server library will send, such as a status line below 100 or a reset in the middle of a body.
public final class RawServer: Sendable {
    /// One thing the server does once it has read a request head.
    public enum Step: Sendable {
        /// Writes bytes as they are.
        case send(String)
        /// Waits before the next step, so that what was sent arrives before a reset.
        case pause(milliseconds: Int64)
        /// Closes with a TCP reset (`SO_LINGER` zero), which the client reads as `ECONNRESET`.
        case reset
        /// Closes cleanly.
        case close
    }

    /// The port it listens on.
    public let port: Int
    private let channel: any Channel
    private let accepted: ConnectionCount

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    /// How many connections it has accepted.
    public var connections: Int { accepted.value.withLock { $0 } }

    private init(port: Int, channel: any Channel, accepted: ConnectionCount) {
        self.port = port
        self.channel = channel
        self.accepted = accepted
    }

    /// Starts a server on an ephemeral port that plays `script` on every connection.
    public static func start(_ script: [Step]) async throws -> RawServer {
        let accepted = ConnectionCount()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                accepted.value.withLock { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptHandler(script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return RawServer(port: channel.localAddress?.port ?? 0, channel: channel, accepted: accepted)
    }

    /// Stops listening.
    public func stop() async {
        try? await channel.close()
    }
}

private final class ConnectionCount: Sendable {
    let value = Locked(0)
}

/// Reads until the end of a request head, then plays the script.
private final class ScriptHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let script: [RawServer.Step]
    private var head: [UInt8] = []
    private var started = false

    init(script: [RawServer.Step]) { self.script = script }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !started else { return }
        head += unwrapInboundIn(data).readableBytesView
        guard head.count >= 4,
            head.indices.dropLast(3).contains(where: { head[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) })
        else { return }
        started = true
        play(script[...], context: context)
    }

    private func play(_ steps: ArraySlice<RawServer.Step>, context: ChannelHandlerContext) {
        guard let step = steps.first else { return }
        let rest = steps.dropFirst()
        switch step {
        case .send(let text):
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text))).assumeIsolated().whenComplete { _ in
                self.play(rest, context: context)
            }
        case .pause(let milliseconds):
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(milliseconds)) {
                self.play(rest, context: context)
            }
        case .reset:
            guard let socket = context.channel as? any SocketOptionProvider else {
                context.close(promise: nil)
                return
            }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .close:
            context.close(promise: nil)
        }
    }
}
