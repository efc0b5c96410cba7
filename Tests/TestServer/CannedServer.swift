public import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MonoRailTransport
import NIOCore

/// A server that answers each `METHOD /path?query` with the response a test scripted for it, and
/// records what it received: for responses a real server would never send (hostile or inconsistent
/// bodies), so the client code under test still talks real HTTP.
public final class CannedServer: Sendable {
    /// A scripted answer.
    public struct Answer: Sendable {
        var status: Int
        var body: Data
        var contentType: String
        var delay: Duration = .zero
        var headers: [String: String] = [:]
    }

    /// The port it listens on.
    public let port: Int
    private let state: CannedState
    private let task: Task<Void, any Error>

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    private init(port: Int, state: CannedState, task: Task<Void, any Error>) {
        self.port = port
        self.state = state
        self.task = task
    }

    /// Scripts the answer to a request line such as `"GET /trains/1"`.
    public func respond(
        to line: String, status: Int = 200, contentType: String = "application/json", body: String,
        headers: [String: String] = [:], after delay: Duration = .zero
    ) {
        respond(
            to: line, status: status, contentType: contentType, data: Data(body.utf8), headers: headers, after: delay)
    }

    /// Scripts a binary answer, such as a MessagePack body.
    public func respond(
        to line: String, status: Int = 200, contentType: String, data: Data, headers: [String: String] = [:],
        after delay: Duration = .zero
    ) {
        state.answers.withLock {
            $0[line] = Answer(status: status, body: data, contentType: contentType, delay: delay, headers: headers)
        }
    }

    /// The request lines received so far, with their bodies after a space when there is one.
    public var requests: [String] { state.received.withLock { $0 } }

    /// Starts a server on an ephemeral port.
    public static func start() async throws -> CannedServer {
        let state = CannedState()
        let router = Router()
        router.add(middleware: CannedMiddleware(state: state))
        let (port, task) = try await serve(router, name: "CannedServer")
        return CannedServer(port: port, state: state, task: task)
    }

    /// Stops serving.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }
}

final class CannedState: Sendable {
    let answers = Locked<[String: CannedServer.Answer]>([:])
    let received = Locked<[String]>([])
}

struct CannedMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let state: CannedState

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
