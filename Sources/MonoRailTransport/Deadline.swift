/// Runs `operation`, cancelling it and throwing ``TransportError/Code/timedOut`` when it takes longer
/// than `timeout`. Cancellation of the calling task surfaces as ``TransportError/Code/cancelled``.
package func withDeadline<Value: Sendable>(
    _ timeout: Duration,
    operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        do {
            guard let first = try await group.next() else {
                throw TransportError(.cancelled, "the request was cancelled")
            }
            guard let value = first else {
                throw TransportError(.timedOut, "the request timed out after \(timeout)")
            }
            return value
        } catch let error as TransportError {
            throw error
        } catch {
            if Task.isCancelled || error is CancellationError {
                throw TransportError(.cancelled, "the request was cancelled", underlyingError: error)
            }
            throw error
        }
    }
}
