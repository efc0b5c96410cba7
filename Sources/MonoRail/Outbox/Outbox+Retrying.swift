import Foundation

// Retrying: the automatic run started again after a failure, later each time.
extension Outbox {
    /// 1 s, 2 s, 4 s, … up to a minute, with a quarter of jitter.
    static func backoff(attempts: Int) -> Duration {
        let seconds = min(60, pow(2, Double(max(0, attempts - 1))))
        return .milliseconds(Int(seconds * 1000 * Double.random(in: 0.75...1)))
    }

    /// The longest a write waits before its next attempt, whatever the server's `Retry-After` says:
    /// a server may name any number of seconds, and a sleep of that long would overflow (or stall
    /// the write past every limit).
    static let longestRetryDelay: Duration = .seconds(3_600)

    /// The wait before the next attempt: the server's `Retry-After` when it sent one, else the
    /// backoff; never more than ``longestRetryDelay``.
    static func retryDelay(asked retryAfter: Duration?, attempts: Int) -> Duration {
        min(max(.zero, retryAfter ?? backoff(attempts: attempts)), longestRetryDelay)
    }

    /// Whole seconds, for a message.
    static func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }

    func scheduleRetry() {
        state.withLock { state in
            guard state.run == nil, !state.entries.isEmpty, !state.awaitsToken else { return }
            let delay = min(state.retryDelay, Self.longestRetryDelay)
            state.retry?.cancel()
            state.retry = Task { [weak self] in
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled, let self else { return }
                self.state.withLock { $0.retry = nil }
                self.startAutomaticRun()
            }
        }
    }
}
