import Foundation
import HTTPTypes
import MonoRailTransport

/// Shares one in-flight request between concurrent identical GETs.
///
/// Identical means same method, URL and header fields, so two users' requests with different
/// credentials are never merged. The first caller runs the request in its own task, with no extra
/// task or actor hop; later callers wait for its result. A waiter that is cancelled stops waiting at
/// once. When the first caller is cancelled, its request stops and every waiter transparently runs
/// the request again, so one caller's cancellation never fails another.
final class RequestCoalescer: Sendable {
    typealias Exchange = (HTTPResponse, Data)

    /// A waiter's outcome: the shared result, or `nil` to run the request again.
    private typealias Waiter = CheckedContinuation<Result<Exchange, any Error>?, Never>

    private struct State {
        var nextWaiter = 0
        var inFlight: [Key: [Int: Waiter]] = [:]
    }

    private let state = Locked(State())

    /// The number of requests in flight, for tests.
    var inFlightCount: Int { state.withLock { $0.inFlight.count } }

    /// What makes two requests identical: method, URL and header fields, in order.
    struct Key: Hashable, Sendable {
        let method: HTTPRequest.Method
        let scheme: String?
        let authority: String?
        let path: String?
        let headerFields: HTTPFields
        /// Worked out once: each request looks its key up three times, and hashing the header
        /// fields is most of the cost of a look-up.
        private let hash: Int

        init(_ request: HTTPRequest) {
            method = request.method
            scheme = request.scheme
            authority = request.authority
            path = request.path
            headerFields = request.headerFields
            var hasher = Hasher()
            hasher.combine(method)
            hasher.combine(scheme)
            hasher.combine(authority)
            hasher.combine(path)
            hasher.combine(headerFields)
            hash = hasher.finalize()
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.hash == rhs.hash && lhs.method == rhs.method && lhs.path == rhs.path && lhs.authority == rhs.authority
                && lhs.scheme == rhs.scheme && lhs.headerFields == rhs.headerFields
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }
    }

    static func key(for request: HTTPRequest) -> Key {
        Key(request)
    }

    func run(key: Key, operation: @Sendable () async throws -> Exchange) async throws -> Exchange {
        while true {
            let waiterID: Int? = state.withLock { state in
                if state.inFlight[key] == nil {
                    state.inFlight[key] = [:]
                    return nil
                }
                state.nextWaiter += 1
                return state.nextWaiter
            }
            guard let waiterID else {
                return try await own(key: key, operation: operation)
            }
            if let outcome = await wait(key: key, id: waiterID) {
                return try outcome.get()
            }
            try Task.checkCancellation()
        }
    }

    private func own(key: Key, operation: @Sendable () async throws -> Exchange) async throws -> Exchange {
        let result: Result<Exchange, any Error>
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
        let ownerWasCancelled = Task.isCancelled
        let waiters = state.withLock { $0.inFlight.removeValue(forKey: key) ?? [:] }
        for waiter in waiters.values {
            waiter.resume(returning: ownerWasCancelled ? nil : result)
        }
        return try result.get()
    }

    private func wait(key: Key, id: Int) async -> Result<Exchange, any Error>? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let registered = state.withLock { state -> Bool in
                    guard state.inFlight[key] != nil else { return false }
                    state.inFlight[key]?[id] = continuation
                    return true
                }
                if !registered {
                    // The owner finished between our two looks: run the request again.
                    continuation.resume(returning: nil)
                } else if Task.isCancelled {
                    cancelWaiter(key: key, id: id)
                }
            }
        } onCancel: {
            cancelWaiter(key: key, id: id)
        }
    }

    private func cancelWaiter(key: Key, id: Int) {
        let waiter = state.withLock { $0.inFlight[key]?.removeValue(forKey: id) }
        waiter?.resume(returning: .failure(CancellationError()))
    }
}
