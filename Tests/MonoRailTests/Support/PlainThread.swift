import Foundation

/// Runs `body` on a thread of its own, outside any task, as a script's blocking calls run: the
/// blocking variants are unavailable from async code, and must not block a thread of the pool.
func onPlainThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
