public import Foundation
import HTTPTypes
package import Hummingbird
import Logging
public import MonoRail
import MonoRailTransport
import NIOCore

/// A server that answers each request line with the answer a test scripted for it, and records what
/// it received: for what the reference server would never send — a hostile or inconsistent body,
/// another server's envelope, an error shape of its own — so the code under test still talks HTTP.
///
/// ```swift
/// try await withScriptedServer { server, store in
///     server.respond(to: "GET /trains/1", status: 422, body: #"{"detail": "no such train"}"#)
///     await #expect(throws: APIError.self) { try await Train.get(id: 1, in: store) }
///     #expect(server.requests == ["GET /trains/1"])
/// }
/// ```
///
/// A request nobody scripted is answered `404 {"error": "not scripted: <line>"}`.
public final class ScriptedServer: Sendable {
    /// A scripted answer.
    struct Answer: Sendable {
        var status: Int
        var body: Data
        var contentType: String
        var delay: Duration
        var headers: [String: String]
    }

    /// The port it listens on.
    public let port: Int
    private let state: ScriptState
    private let task: Task<Void, any Error>

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    private init(port: Int, state: ScriptState, task: Task<Void, any Error>) {
        self.port = port
        self.state = state
        self.task = task
    }

    /// Scripts the answer to a request line: the method, the path and the query as sent, such as
    /// `"GET /trains?page=2"`. A later script for the same line replaces it.
    ///
    /// - Parameters:
    ///   - line: The request line.
    ///   - status: The status code.
    ///   - contentType: The `Content-Type`; empty for none.
    ///   - body: The body, as text.
    ///   - headers: More response headers.
    ///   - delay: How long to wait before answering.
    public func respond(
        to line: String, status: Int = 200, contentType: String = "application/json", body: String,
        headers: [String: String] = [:], after delay: Duration = .zero
    ) {
        respond(
            to: line, status: status, contentType: contentType, data: Data(body.utf8), headers: headers, after: delay)
    }

    /// Scripts a binary answer, such as a MessagePack body; see ``respond(to:status:contentType:body:headers:after:)``.
    public func respond(
        to line: String, status: Int = 200, contentType: String, data: Data, headers: [String: String] = [:],
        after delay: Duration = .zero
    ) {
        state.answers.withLock {
            $0[line] = Answer(status: status, body: data, contentType: contentType, delay: delay, headers: headers)
        }
    }

    /// The request lines received so far, each followed by a space and its body when it had one.
    public var requests: [String] { state.received.withLock { $0 } }

    /// Starts a server on a free loopback port.
    ///
    /// - Throws: When the server cannot listen.
    public static func start() async throws -> ScriptedServer {
        let state = ScriptState()
        let router = Router()
        router.add(middleware: ScriptMiddleware(state: state))
        let (port, task) = try await serve(router, name: "ScriptedServer")
        return ScriptedServer(port: port, state: state, task: task)
    }

    /// Stops serving.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// Runs `body` with a scripted server on a free port and a store of its own pointed at it, then
/// stops the server. The store is configured for tests (`retryPolicy: .none`) and then by `configure`.
///
/// - Throws: What starting the server or `body` throws; the server is stopped either way.
@discardableResult
public func withScriptedServer<Result>(
    store configure: (inout MonoRail.Configuration) -> Void = { _ in },
    _ body: (ScriptedServer, ResourceStore) async throws -> Result
) async throws -> Result {
    try await ServerSlots.withSlot {
        let server = try await ScriptedServer.start()
        var configuration = MonoRail.Configuration.testing(apiRootURL: server.baseURL)
        configure(&configuration)
        do {
            let result = try await body(server, ResourceStore(configuration: configuration))
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// Serves `router` on 127.0.0.1 on a free port, in the background.
///
/// - Returns: The port once the server listens, and the task serving (cancel it to stop).
package func serve(_ router: Router<BasicRequestContext>, name: String) async throws -> (Int, Task<Void, any Error>) {
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

private final class ScriptState: Sendable {
    let answers = Locked<[String: ScriptedServer.Answer]>([:])
    let received = Locked<[String]>([])
}

private struct ScriptMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let state: ScriptState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let line = "\(request.method.rawValue) \(request.uri.description)"
        let body = try await request.body.collect(upTo: 1 << 22)
        let text = String(buffer: body)
        state.received.withLock { $0.append(text.isEmpty ? line : line + " " + text) }
        guard let answer = state.answers.withLock({ $0[line] }) else {
            return Response(
                status: .notFound, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"not scripted: \#(line)"}"#)))
        }
        if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
        var headers = HTTPFields()
        if !answer.contentType.isEmpty { headers[.contentType] = answer.contentType }
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { headers[name] = value }
        }
        return Response(
            status: .init(code: answer.status), headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
