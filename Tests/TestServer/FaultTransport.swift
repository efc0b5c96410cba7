public import Foundation
public import HTTPTypes
public import MonoRail
public import MonoRailTransport

/// A transport that sends every request to the real server and, for the requests a test names,
/// loses the answer after the server made it — the server committed the write, the app sees the
/// connection closed: the lost answer of a flaky network, which no server can be asked to send — or
/// holds it back a while, so that what happens meanwhile (a push, a read) overtakes it; or runs a
/// step just before a request goes, such as another client's delete between two pages.
public final class FaultTransport: StreamingTransport {
    private let inner: any StreamingTransport
    /// Request lines (`"PUT /trains/1"`) whose next answers are lost, with how many are left.
    private let losing = Locked<[String: Int]>([:])
    /// Request lines whose answers are held back, and for how long.
    private let holding = Locked<[String: Duration]>([:])
    /// Steps to run before the first request whose target (`"GET /trains?page=2"`) passes the test,
    /// once each.
    private let beforeMatching = Locked<[(test: @Sendable (String) -> Bool, step: @Sendable () async throws -> Void)]>(
        [])
    /// The bodies sent, by request line, in order.
    private let sent = Locked<[String: [Data]]>([:])

    /// - Parameter inner: The transport that talks to the server; the default one, unless it cannot
    ///   stream (event streams pass through untouched).
    public init(_ inner: any Transport = MonoRail.defaultTransport) {
        self.inner = inner as? any StreamingTransport ?? URLSessionTransport.shared
    }

    /// Opens an event stream through the inner transport, untouched.
    public func open(_ request: HTTPRequest, metadata: RequestMetadata) async throws -> (
        HTTPResponse, ResponseBodyStream
    ) {
        try await inner.open(request, metadata: metadata)
    }

    /// Loses the next `count` answers to `line`.
    public func loseAnswers(to line: String, count: Int = 1) {
        losing.withLock { $0[line, default: 0] += count }
    }

    /// Loses and holds nothing more, and runs no step armed before.
    public func loseNothing() {
        losing.withLock { $0 = [:] }
        holding.withLock { $0 = [:] }
        beforeMatching.withLock { $0 = [] }
    }

    /// Holds the answers to `line` back for `delay` after the server made them.
    public func holdAnswers(to line: String, for delay: Duration) {
        holding.withLock { $0[line] = delay }
    }

    /// Runs `step` once, just before the request to `target` (method, path and query) is sent.
    public func beforeSending(_ target: String, _ step: @escaping @Sendable () async throws -> Void) {
        beforeSending(where: { $0 == target }, run: step)
    }

    /// Sends the answers to `line` as they come again.
    public func release(_ line: String) {
        holding.withLock { $0[line] = nil }
    }

    /// Runs `step` once, just before the first request whose target (method, path and query) passes
    /// `test`: the second page of a walk, whatever its query says besides.
    public func beforeSending(
        where test: @escaping @Sendable (String) -> Bool, run step: @escaping @Sendable () async throws -> Void
    ) {
        beforeMatching.withLock { $0.append((test, step)) }
    }

    /// The bodies sent with `line`, in order.
    public func bodies(of line: String) -> [Data] {
        sent.withLock { $0[line] ?? [] }
    }

    /// Sends through the inner transport: the armed step first, then the request; the answer lost
    /// or held back when the request line is armed so.
    public func send(_ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata) async throws -> (
        HTTPResponse, Data
    ) {
        let line = "\(request.method.rawValue) \(request.path?.split(separator: "?").first.map(String.init) ?? "")"
        let target = "\(request.method.rawValue) \(request.path ?? "")"
        let matched = beforeMatching.withLock { armed -> (@Sendable () async throws -> Void)? in
            guard let index = armed.firstIndex(where: { $0.test(target) }) else { return nil }
            return armed.remove(at: index).step
        }
        if let matched { try await matched() }
        if case .data(let data)? = body?.storage { sent.withLock { $0[line, default: []].append(data) } }
        let answer = try await inner.send(request, body: body, metadata: metadata)
        let loses = losing.withLock { losing -> Bool in
            guard let left = losing[line], left > 0 else { return false }
            losing[line] = left - 1
            return true
        }
        if loses { throw TransportError(.connectionClosed, "the answer was lost (FaultTransport)") }
        if let delay = holding.withLock({ $0[line] }) { try await Task.sleep(for: delay) }
        return answer
    }
}
