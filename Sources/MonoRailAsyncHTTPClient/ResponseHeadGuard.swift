public import AsyncHTTPClient
import MonoRailTransport
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Refuses a response whose status is below 100 before AsyncHTTPClient's request state machine
/// sees it.
///
/// AsyncHTTPClient 1.37 takes any status below 200 other than 101 for an informational response
/// and waits for the real one; a body part that follows such a head makes its
/// `HTTPRequestStateMachine` trap ("How can we receive a response body, if we haven't received a
/// head"), so `HTTP/1.1 000 Zero` from a broken proxy would end the app. This handler sits right
/// after the response decoder, turns such a head into ``TransportError/Code/invalidResponse`` and
/// closes the connection; nothing after it is passed on.
final class ResponseHeadGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data), head.status.code < 100 {
            refused = true
            context.fireErrorCaught(
                TransportError(
                    .invalidResponse, "the server answered with status \(head.status.code), which HTTP does not define")
            )
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }

    /// Adds the guard after `Decoder` in the channel's pipeline, on the channel's event loop.
    static func install<Decoder: ChannelHandler & SendableMetatype>(
        after decoder: Decoder.Type, in channel: any Channel
    )
        -> EventLoopFuture<Void>
    {
        channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: Decoder.self)
            try pipeline.addHandler(ResponseHeadGuard(), position: .after(decoder))
        }
    }
}

extension AsyncHTTPClientTransport {
    /// `configuration` with MonoRail's response guard installed on every HTTP/1.1 connection and
    /// HTTP/2 stream, keeping any debug initializers it already has.
    ///
    /// The transport's default client has it. A client you pass to
    /// ``init(client:configuration:)`` should be built from a configuration that went through this
    /// function: without it, a server answering with a status below 100 crashes AsyncHTTPClient 1.37.
    ///
    /// ```swift
    /// let client = HTTPClient(
    ///     eventLoopGroupProvider: .singleton,
    ///     configuration: AsyncHTTPClientTransport.guardingResponses(HTTPClient.Configuration()))
    /// ```
    public static func guardingResponses(_ configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        var configuration = configuration
        let connection = configuration.http1_1ConnectionDebugInitializer
        configuration.http1_1ConnectionDebugInitializer = { channel in
            ResponseHeadGuard.install(after: ByteToMessageHandler<HTTPResponseDecoder>.self, in: channel)
                .flatMap { connection?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
        }
        let stream = configuration.http2StreamChannelDebugInitializer
        configuration.http2StreamChannelDebugInitializer = { channel in
            ResponseHeadGuard.install(after: HTTP2FramePayloadToHTTP1ClientCodec.self, in: channel)
                .flatMap { stream?(channel) ?? channel.eventLoop.makeSucceededVoidFuture() }
        }
        return configuration
    }
}
