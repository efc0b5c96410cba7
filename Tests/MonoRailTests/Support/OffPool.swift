import Foundation

/// Runs blocking work — waiting for a child process, reading its output to the end — on a thread of
/// its own. Swift's cooperative pool has one thread per core (two here): a test that blocks one
/// stalls every server and client of the test process meanwhile, and their requests time out.
func offPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
