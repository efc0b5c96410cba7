import Foundation
import MonoRailTransport
import Testing

@testable import MonoRail

/// `networkFirst`'s race between the network and the offline deadline: an attempt that answers
/// before its deadline is the outcome, however the deadline's timer is scheduled once stopped.
@Suite("The first outcome of an attempt and its deadline", .timeLimit(.minutes(2)))
struct FirstOutcomeTests {
    /// A clock whose sleeps end only when cancelled, and whose cancellation is slow to return: the
    /// stopped timer runs on while its canceller is still inside `cancel()`, as it may on a busy
    /// machine.
    final class SlowCancelClock: Clock, Sendable {
        var now: ContinuousClock.Instant { ContinuousClock().now }
        var minimumResolution: Duration { .zero }

        func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
            let waiting = Locked<CheckedContinuation<Void, Never>?>(nil)
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    waiting.withLock { $0 = continuation }
                    if Task.isCancelled { waiting.withLock { $0 }?.resume() }
                }
            } onCancel: {
                waiting.withLock { continuation in
                    continuation?.resume()
                    continuation = nil
                }
                // The canceller is held here while the timer's task goes on.
                Thread.sleep(forTimeInterval: 0.02)
            }
            throw CancellationError()
        }
    }

    @Test("an attempt that answers first is the outcome, not the timer it stops")
    func answeredBeforeTheDeadline() async {
        for round in 0..<20 {
            let attempt = Task<Int, any Error> { round }
            let outcome = await FirstOutcome.of(attempt, within: .seconds(3600), clock: SlowCancelClock())
            guard case .answered(.success(let value)) = outcome else {
                Issue.record("round \(round): the deadline's timer won over an attempt that answered")
                return
            }
            #expect(value == round)
        }
    }

    @Test("an attempt past its deadline is late, and goes on")
    func late() async throws {
        let attempt = Task<Int, any Error> {
            try await Task.sleep(for: .milliseconds(200))
            return 7
        }
        let outcome = await FirstOutcome.of(attempt, within: .milliseconds(1), clock: ContinuousClock())
        guard case .late = outcome else {
            Issue.record("expected late, got \(outcome)")
            return
        }
        #expect(try await attempt.value == 7)
    }
}
