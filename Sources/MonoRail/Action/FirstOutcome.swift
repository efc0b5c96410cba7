import MonoRailTransport

/// What came first: the result of an attempt, or its deadline.
enum FirstOutcome<Value: Sendable>: Sendable {
    case answered(Result<Value, any Error>)
    case late

    /// Starts `body` as an attempt of its own and waits for it for at most `deadline` on `clock`;
    /// cancelling the caller cancels the attempt. Returns the attempt too, to go on with or cancel.
    static func attempt(
        within deadline: Duration, clock: any Clock<Duration>, _ body: @escaping @Sendable () async throws -> Value
    ) async -> (FirstOutcome, Task<Value, any Error>) {
        let attempt = Task { try await body() }
        let outcome = await withTaskCancellationHandler {
            await of(attempt, within: deadline, clock: clock)
        } onCancel: {
            attempt.cancel()
        }
        return (outcome, attempt)
    }

    /// Waits for `attempt` for at most `deadline` on `clock`. Never cancels the attempt: past the
    /// deadline it goes on, and its result is for whoever awaits it next.
    static func of(
        _ attempt: Task<Value, any Error>, within deadline: Duration, clock: any Clock<Duration>
    ) async -> FirstOutcome {
        let first = Locked<CheckedContinuation<FirstOutcome, Never>?>(nil)
        @Sendable func finish(_ outcome: FirstOutcome) {
            let continuation = first.withLock { continuation in
                defer { continuation = nil }
                return continuation
            }
            continuation?.resume(returning: outcome)
        }
        return await withCheckedContinuation { continuation in
            first.withLock { $0 = continuation }
            let timer = Task {
                do {
                    try await clock.sleep(for: deadline)
                } catch {
                    // Cancelled: the attempt is done, and its outcome is the first.
                    return
                }
                finish(.late)
            }
            Task {
                let result = await attempt.result
                finish(.answered(result))
                timer.cancel()
            }
        }
    }
}
