import Foundation
import HTTPTypes
import Hummingbird
import MonoRailTransport
import NIOCore
import ServiceLifecycle

/// `Last-Event-ID`, where a change stream resumes.
let lastEventIDField = HTTPField.Name("Last-Event-ID")

/// How `GET /changes` serves the change log.
public struct ChangeFeedSettings: Sendable, Hashable {
    /// How often a stream with nothing to send says it is alive with a comment. Default 15 seconds.
    public var heartbeat: Duration
    /// How many streams this server serves at once; one more is answered `503` with `Retry-After`.
    /// Default 1,000.
    public var maxClients: Int
    /// How many changes the log keeps; a client resuming from an older one gets `event: reset`.
    /// Default 100,000.
    public var retention: Int
    /// The `retry` field each stream starts with: how long a client waits before reconnecting.
    /// Default 1 second.
    public var retry: Duration

    /// Creates settings.
    public init(
        heartbeat: Duration = .seconds(15), maxClients: Int = 1000, retention: Int = 100_000,
        retry: Duration = .seconds(1)
    ) {
        self.heartbeat = heartbeat
        self.maxClients = max(1, maxClients)
        self.retention = max(1, retention)
        self.retry = retry
    }
}

/// `GET /changes`: the change log as Server-Sent Events, replayed from the client's
/// `Last-Event-ID` (or `?after=`), then live as writes commit.
///
/// ```
/// id: 42
/// event: updated
/// data: {"train": {"id": 1, "company": "MonoRail Co.", …}}
/// ```
///
/// A stream without a cursor starts from now with an `id` line and no event, the cursor a client
/// keeps. A cursor the log no longer reaches — older than the changes it keeps, or newer than any
/// it ever had — is answered `event: reset` with the newest id: the client reads its records again
/// and goes on from there.
struct ChangeFeedRoutes: Sendable {
    let store: RecordStore
    let settings: ChangeFeedSettings
    /// The streams being served.
    let clients = Locked(0)

    /// Changes sent per read of the log.
    private static let batchSize = 512

    func install(on router: Router<BasicRequestContext>) {
        router.get("/changes") { request, _ in try stream(request) }
    }

    private func stream(_ request: Request) throws -> Response {
        let maxClients = settings.maxClients
        let admitted = clients.withLock { count in
            guard count < maxClients else { return false }
            count += 1
            return true
        }
        guard admitted else {
            var refused = Response(status: .serviceUnavailable)
            refused.headers[.retryAfter] = "5"
            refused.headers[.contentType] = "application/json"
            refused.body = ResponseBody(byteBuffer: ByteBuffer(string: #"{"error": "Too many change streams"}"#))
            return refused
        }
        let requested =
            lastEventIDField.flatMap { request.headers[$0] }
            ?? request.uri.queryParameters["after"].map(String.init)
        let (store, settings, clients) = (self.store, self.settings, self.clients)
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        // Where the stream starts is decided before its head is sent: a client that sees the head
        // and then writes (or has another client write) finds the change in its stream.
        let milliseconds = Int64(settings.retry / .milliseconds(1))
        var opening = "retry: \(milliseconds)\n"
        let start: Int64
        do {
            let (oldest, newest) = try store.changeBounds()
            if let requested {
                if let asked = Int64(requested.trimmingCharacters(in: .whitespaces)),
                    Self.canResume(from: asked, oldest: oldest, newest: newest)
                {
                    start = asked
                } else {
                    start = newest
                    opening += Self.reset(newest)
                }
            } else {
                // From now: the newest id is the client's cursor.
                start = newest
                opening += "id: \(newest)\n\n"
            }
        } catch {
            clients.withLock { $0 -= 1 }
            throw error
        }
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { [opening] writer in
                defer { clients.withLock { $0 -= 1 } }
                let cursor = start
                try await writer.write(ByteBuffer(string: opening))
                let signal = store.changeSignal
                try await withGracefulShutdownHandler {
                    try await Self.follow(from: cursor, store: store, heartbeat: settings.heartbeat, writer: &writer)
                } onGracefulShutdown: {
                    signal.close()
                }
                try await writer.finish(nil)
            })
    }

    /// Sends the changes after `cursor` as they commit, until the server stops or the client goes.
    private static func follow(
        from start: Int64, store: RecordStore, heartbeat: Duration, writer: inout any ResponseBodyWriter
    ) async throws {
        var cursor = start
        let signal = store.changeSignal
        var isQuiet = false
        while !Task.isCancelled && !signal.isClosed {
            let changes = try await store.changeBuffer.changes(
                after: cursor, limit: batchSize, newest: signal.newest, refresh: isQuiet
            ) { try store.changes(after: $0, limit: $1) }
            guard let first = changes.first else {
                // A heartbeat's time with no wake-up: read the log all the same, in case one was lost.
                isQuiet = await !signal.wait(beyond: cursor, timeout: heartbeat)
                if isQuiet { try await writer.write(ByteBuffer(string: ": heartbeat\n\n")) }
                continue
            }
            isQuiet = false
            if first.id > cursor + 1 {
                // Ids may skip (a rolled-back write), but not below what the log keeps.
                let (oldest, newest) = try store.changeBounds()
                if !canResume(from: cursor, oldest: oldest, newest: newest) {
                    cursor = newest
                    try await writer.write(ByteBuffer(string: reset(newest)))
                    continue
                }
            }
            var text = ""
            for change in changes {
                text += "id: \(change.id)\nevent: \(change.kind.rawValue)\ndata: \(change.data)\n\n"
            }
            cursor = changes[changes.count - 1].id
            try await writer.write(ByteBuffer(string: text))
        }
    }

    /// Whether the log still holds every change after `cursor`.
    static func canResume(from cursor: Int64, oldest: Int64?, newest: Int64) -> Bool {
        guard cursor >= 0, cursor <= newest else { return false }
        guard let oldest else { return cursor == newest }
        return cursor >= oldest - 1
    }

    private static func reset(_ newest: Int64) -> String {
        "id: \(newest)\nevent: reset\ndata: {}\n\n"
    }
}
