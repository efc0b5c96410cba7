import Atomics
import Foundation
import HTTPTypes
import Logging
import MonoRailTransport

// The connection's life: open the stream, read it until it fails or goes silent, wait, open it
// again from the last event merged.
extension LiveUpdates {
    /// Runs the connection until it is disconnected or stopped by an error retrying won't fix.
    func run(generation: Int) async {
        var failures = 0
        defer {
            connection.withLock { connection in
                if connection.generation == generation { connection.task = nil }
            }
        }
        while !Task.isCancelled {
            guard let store = connection.withLock({ $0.generation == generation ? $0.store : nil }) else { return }
            let configuration = store.configuration
            let logger = configuration.logger
            guard let settings = configuration.liveUpdates else {
                stop(APIError(.invalidConfiguration, "live updates are no longer configured"), generation: generation)
                return
            }
            setState(.connecting, generation: generation)
            do {
                try await readStream(
                    store: store, settings: settings, limits: configuration.limits, generation: generation
                ) {
                    failures = 0
                }
                // The server ended the stream: it is opened again, as EventSource does.
            } catch is Unreadable {
                // Reported where it was found; opened again from the last event merged, at once.
                if Task.isCancelled || connection.withLock({ $0.generation != generation }) { return }
                continue
            } catch {
                if Task.isCancelled || connection.withLock({ $0.generation != generation }) { return }
                let failure = APIError.wrapping(error, request: nil)
                if Self.isFinal(failure) {
                    report(failure, logger: logger)
                    stop(failure, generation: generation)
                    return
                }
                report(failure, logger: logger)
            }
            failures += 1
            let delay = reconnectDelay(after: failures, settings: settings)
            setState(.waiting(retryAt: store.now().addingTimeInterval(delay.timeInterval)), generation: generation)
            do {
                try await Task.sleep(for: delay)
            } catch {
                return
            }
        }
    }

    /// Ends the run for good: the task is let go before the state says so, so a ``connect()`` that
    /// reads the state starts a new one rather than wait for this one.
    private func stop(_ failure: APIError, generation: Int) {
        connection.withLock { connection in
            if connection.generation == generation { connection.task = nil }
        }
        setState(.stopped(failure), generation: generation)
    }

    /// Whether retrying cannot help: the request is wrong for this server, or the user may not read
    /// the stream.
    static func isFinal(_ error: APIError) -> Bool {
        switch error.code {
        case .invalidConfiguration, .invalidRequest, .invalidResponse, .unauthorized, .forbidden:
            return true
        case .httpStatus:
            guard let status = error.statusCode else { return false }
            return (400..<500).contains(status) && status != 408 && status != 429
        default:
            return false
        }
    }

    /// The wait before the next attempt: the server's `retry`, else the configured delay, doubled
    /// for each failure in a row up to the configured most, then a random time between half that
    /// and all of it, so that clients a restart dropped together do not come back together.
    func reconnectDelay(after failures: Int, settings: LiveUpdatesConfiguration) -> Duration {
        let base = connection.withLock { $0.serverRetry } ?? settings.reconnectDelay
        let ceiling = max(base, settings.maxReconnectDelay)
        let doubled = base * (1 << min(max(failures - 1, 0), 16))
        let bound = min(doubled, ceiling)
        // At least half the bound, so that a failing server is not asked again at once.
        let half = bound.timeInterval / 2
        return .seconds(half + Double.random(in: 0...half))
    }

    /// Opens the stream from the cursor and reads it until it ends, fails or goes silent.
    private func readStream(
        store: ResourceStore, settings: LiveUpdatesConfiguration, limits: MonoRail.Configuration.Limits,
        generation: Int, onLive: () -> Void
    ) async throws {
        let cursor = try await readCursor(store: store, settings: settings)
        var request = APIRequest(
            method: .get,
            path: settings.path.contains("://")
                ? APIPath(verbatim: settings.path) : APIPath(stringLiteral: settings.path))
        request.headers[.accept] = "text/event-stream"
        request.headers[.cacheControl] = "no-cache"
        if let cursor, let name = HTTPField.Name("Last-Event-ID") { request.headers[name] = cursor }
        request.options.operationName = "liveUpdates.connect"
        let (response, body) = try await Exchange(client: store.client).stream(
            request, maxBufferedSize: limits.maxEventSize * 4)
        let contentType = response.response.headerFields[.contentType] ?? ""
        guard contentType.lowercased().hasPrefix("text/event-stream") else {
            throw APIError(
                .invalidResponse,
                "\(settings.path) answered with \(contentType.isEmpty ? "no content type" : contentType), "
                    + "not an event stream (text/event-stream)",
                request: response.request, response: response.response)
        }
        guard connection.withLock({ $0.generation == generation }) else { return }
        if cursor == nil, store.hasMergedAnswers.load(ordering: .relaxed) {
            // A first stream starts from now: a change made between the app's reads and now is in no
            // event. What the store read before is read again, from after the stream's start, before
            // `connect()` returns; the events that come meanwhile wait in the stream.
            await resetAll(in: store, logger: store.configuration.logger)
            guard connection.withLock({ $0.generation == generation }) else { return }
        }
        setState(.live, generation: generation)
        onLive()
        let idleTimeout = settings.idleTimeout
        let lastActivity = Locked(ContinuousClock.now)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var parser = ServerSentEventParser(maxEventSize: limits.maxEventSize)
                for try await chunk in body {
                    lastActivity.withLock { $0 = .now }
                    let outputs = parser.parse(chunk)
                    try Task.checkCancellation()
                    try await self.apply(outputs, store: store, settings: settings)
                }
            }
            group.addTask {
                // Silence — not even a heartbeat comment — for the idle timeout: the connection is dead.
                let tick = max(idleTimeout / 4, .milliseconds(10))
                while true {
                    try await Task.sleep(for: tick)
                    let silent = lastActivity.withLock { ContinuousClock.now - $0 }
                    if silent >= idleTimeout {
                        throw APIError(.timedOut, "the stream was silent for \(idleTimeout); opening it again")
                    }
                }
            }
            defer { group.cancelAll() }
            // The reader ends with the stream; the watchdog only by throwing.
            try await group.next()
        }
    }

    /// The cursor to resume from: the one in memory, else, once, the record cache's.
    private func readCursor(store: ResourceStore, settings: LiveUpdatesConfiguration) async throws -> String? {
        let (cursor, hasRead) = connection.withLock { ($0.lastEventID, $0.hasReadCursor) }
        if hasRead || cursor != nil { return cursor }
        let kept = try await store.configuration.storage?.liveCursor(feed: settings.path)
        connection.withLock { $0.hasReadCursor = true }
        if let kept { setLastEventID(kept) }
        return kept
    }
}
