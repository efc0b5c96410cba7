/// Waits until `condition` holds, checking every 20 ms for at most `limit`: for something another
/// task or the server does (a live list refreshed, an outbox drained). A bound on waiting, not a
/// timing assertion: generous, because on a busy machine a task can wait seconds for a core.
///
/// ```swift
/// #expect(try await eventually { query.instances.count == 3 })
/// ```
///
/// - Returns: Whether `condition` held before the limit passed.
/// - Throws: `CancellationError` when the task is cancelled while waiting.
public func eventually(within limit: Duration = .seconds(30), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
