import MonoRailTransport

/// Lets at most `limit` requests to one origin hold a connection at once; the others wait here, in
/// order, for as long as their own timeout allows.
///
/// AsyncHTTPClient queues a request that finds every connection of its pool busy, but bounds that
/// wait by the *connect* timeout (10 s) and then fails it as `getConnectionFromPoolTimeout`: an app
/// with many slow requests in flight to its one API saw `cannotConnect` from a server that was up
/// and answering. Waiting here instead keeps the pool's queue empty, so its connect timeout only
/// ever measures connecting.
final class ConnectionGate: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var nextID: UInt64 = 0
        var inFlight: [String: Int] = [:]
        var waiters: [String: [Waiter]] = [:]
    }

    /// The most requests to one origin in flight at once.
    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` once fewer than ``limit`` other requests to `origin` are running.
    ///
    /// Cancellation (the request's deadline included) ends the wait with `CancellationError`.
    func withSlot<Value>(for origin: String, _ body: () async throws -> Value) async throws -> Value {
        try await acquire(origin)
        defer { release(origin) }
        return try await body()
    }

    private func acquire(_ origin: String) async throws {
        let id: UInt64? = state.withLock { state in
            if state.inFlight[origin, default: 0] < limit {
                state.inFlight[origin, default: 0] += 1
                return nil
            }
            state.nextID &+= 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before the waiter was queued, or a slot freed in between.
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.inFlight[origin, default: 0] < limit {
                        state.inFlight[origin, default: 0] += 1
                        return .success(())
                    }
                    state.waiters[origin, default: []].append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let cancelled: Waiter? = state.withLock { state in
                guard let index = state.waiters[origin]?.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters[origin]?.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release(_ origin: String) {
        let next: Waiter? = state.withLock { state in
            // The slot passes straight to the first waiter, so the count stays as it is.
            if var queue = state.waiters[origin], !queue.isEmpty {
                let first = queue.removeFirst()
                state.waiters[origin] = queue.isEmpty ? nil : queue
                return first
            }
            let remaining = state.inFlight[origin, default: 1] - 1
            state.inFlight[origin] = remaining > 0 ? remaining : nil
            return nil
        }
        next?.continuation.resume()
    }
}
