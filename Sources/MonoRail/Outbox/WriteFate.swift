import Foundation
import MonoRailTransport

/// How a kept write ended, for whoever awaits it (``ResourceResponse/settled()``): made when the
/// outbox keeps the write, settled once when the server takes it, refuses it, or the outbox parks
/// or drops it.
final class WriteFate: Sendable {
    private enum State {
        case waiting([UUID: CheckedContinuation<Result<Void, APIError>, Never>])
        case settled(Result<Void, APIError>)
    }

    private let state = Locked(State.waiting([:]))

    /// Settles the write, once: a later call does nothing.
    func settle(_ result: Result<Void, APIError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Void, APIError>, Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .settled(result)
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Waits until the write is settled. A waiter that is cancelled stops waiting with
    /// ``/MonoRailClient/APIError/Code/cancelled``; the write goes on.
    func result() async -> Result<Void, APIError> {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let settled = state.withLock { state -> Result<Void, APIError>? in
                    switch state {
                    case .settled(let result):
                        return result
                    case .waiting(var waiters):
                        if Task.isCancelled { return .failure(Self.stoppedWaiting) }
                        waiters[id] = continuation
                        state = .waiting(waiters)
                        return nil
                    }
                }
                if let settled { continuation.resume(returning: settled) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Result<Void, APIError>, Never>? in
                guard case .waiting(var waiters) = state else { return nil }
                let waiter = waiters.removeValue(forKey: id)
                state = .waiting(waiters)
                return waiter
            }
            waiter?.resume(returning: .failure(Self.stoppedWaiting))
        }
    }

    private static let stoppedWaiting = APIError(
        .cancelled, "the task waiting for the write was cancelled; the outbox still keeps and sends the write")
}
