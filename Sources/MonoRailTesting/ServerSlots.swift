import Foundation

/// Bounds how many in-process servers a test process serves from at once.
///
/// Swift Testing runs every test of a process at once, and each server-backed test serves from the
/// same few cores as its client. Unbounded, a busy machine starves the servers: requests fail on
/// "connecting to the server timed out" though nothing is wrong. A test that has a slot keeps it
/// for servers it starts inside (``withReferenceServer(schema:configuration:store:_:)`` within
/// another), so nesting never waits on itself.
actor ServerSlots {
    /// The process's slots: `MONORAIL_TEST_SERVERS` of them, or two per core.
    static let shared = ServerSlots(limit: limitFromEnvironment())

    /// Whether the current task already holds a slot.
    @TaskLocal static var isHolding = false

    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) {
        available = max(1, limit)
    }

    /// Runs `body` holding one of the process's slots.
    static func withSlot<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await shared.withSlot(body)
    }

    /// Runs `body` holding a slot, waiting for one first unless the task holds one already.
    nonisolated func withSlot<Result>(_ body: () async throws -> Result) async throws -> Result {
        if Self.isHolding { return try await body() }
        await acquire()
        do {
            let result = try await Self.$isHolding.withValue(true) { try await body() }
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            // The slot passes straight to the longest waiter.
            waiting.removeFirst().resume()
        }
    }

    private static func limitFromEnvironment() -> Int {
        if let text = ProcessInfo.processInfo.environment["MONORAIL_TEST_SERVERS"], let limit = Int(text), limit > 0 {
            return limit
        }
        return 2 * ProcessInfo.processInfo.activeProcessorCount
    }
}
