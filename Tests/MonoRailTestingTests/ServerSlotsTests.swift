import Foundation
import MonoRailTransport
import Testing

@testable import MonoRailTesting

@Suite("Server slots: a bound on servers at once that never waits on itself", .timeLimit(.minutes(5)))
struct ServerSlotsTests {
    @Test("no more bodies run at once than there are slots, and every one runs")
    func bound() async throws {
        let slots = ServerSlots(limit: 2)
        let running = Locked((now: 0, most: 0, done: 0))
        let gate = Locked(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await slots.withSlot {
                        running.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                        }
                        // Held until the test has looked, however slowly the tasks are scheduled.
                        _ = try await eventually(within: .seconds(120)) { gate.withLock { $0 } }
                        running.withLock {
                            $0.now -= 1
                            $0.done += 1
                        }
                    }
                }
            }
            #expect(try await eventually { running.withLock { $0.now } >= 2 })
            // Time for a body past the bound to start, were the bound not kept.
            try await Task.sleep(for: .milliseconds(200))
            #expect(running.withLock { $0.now } == 2)
            gate.withLock { $0 = true }
            try await group.waitForAll()
        }
        let counts = running.withLock { $0 }
        #expect(counts.most == 2)
        #expect(counts.done == 6)
    }

    @Test("a server started inside another's body shares its slot instead of waiting for one")
    func nested() async throws {
        let slots = ServerSlots(limit: 1)
        let ran = Locked(false)
        // A task of its own, so that a nested wait that never ends fails the test instead of hanging it.
        let nesting = Task {
            try await slots.withSlot {
                try await slots.withSlot { ran.withLock { $0 = true } }
            }
        }
        #expect(try await eventually(within: .seconds(30)) { ran.withLock { $0 } })
        nesting.cancel()
    }

    @Test("a body that throws gives its slot back")
    func releasedOnError() async throws {
        struct Failure: Error {}
        let slots = ServerSlots(limit: 1)
        await #expect(throws: Failure.self) { try await slots.withSlot { throw Failure() } }
        #expect(try await slots.withSlot { true })
    }
}
