import Foundation

/// Runs blocking work — waiting for a child process, reading its output to the end — on a thread of
/// its own. Swift's cooperative pool has one thread per core (two here): a test that blocks one
/// stalls every server and client of the test process meanwhile, and their requests time out.
public func offPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

/// Runs a test's long computation on a thread of its own, as the same task: `#expect` still
/// reports to the test, and the cooperative pool stays free for the servers and clients of every
/// other test, which the scheduler now shares the cores with instead of waiting seconds for a turn.
public func onOwnThread<Value>(_ work: () async throws -> Value) async rethrows -> Value {
    try await withTaskExecutorPreference(OwnThreadExecutor(), operation: work)
}

/// Runs jobs in order on a queue whose thread is not one of the cooperative pool's.
private final class OwnThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "monorail.tests.own-thread")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
