import Foundation

// Retrying: the automatic run started again after a failure, later each time.
extension Outbox {
    /// 1 s, 2 s, 4 s, … up to a minute, with a quarter of jitter.
    static func backoff(attempts: Int) -> Duration {
        let seconds = min(60, pow(2, Double(max(0, attempts - 1))))
        return .milliseconds(Int(seconds * 1000 * Double.random(in: 0.75...1)))
    }

    func scheduleRetry() {
        state.withLock { state in
            guard state.run == nil, !state.entries.isEmpty, !state.awaitsToken else { return }
            let delay = state.retryDelay
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
