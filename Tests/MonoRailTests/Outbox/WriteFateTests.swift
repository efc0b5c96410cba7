import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestServer
import Testing

/// One way to learn how a write ended, whatever the write policy: `try await save().settled()`.
@Suite("A write's fate in one line, whatever the write policy", .timeLimit(.minutes(5)))
struct WriteFateTests {
    /// A queued store on the harness's server, its outbox in a file of `directory`, sending only
    /// when flushed.
    static func queuedStore(_ harness: TestAPI, in directory: URL) throws -> ResourceStore {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = ResourceStore(
            configuration: ParkedWriteTests.configuration(harness.server.baseURL, limits: OutboxLimits()),
            storage: try SQLiteStorage(path: directory.appendingPathComponent("store.sqlite").path))
        store.outbox.isPaused = true
        return store
    }

    @Test("sent at once: settled() is the action's answer; a refusal was thrown by the action")
    func direct() async throws {
        try await withHarness { harness in
            let train = try await QueuedTrain.get(id: 1, in: harness.store)
            train.company = "Settled Rail"
            let saved = try await train.save().settled()
            #expect(saved === train && !train.hasChanges)
            #expect(try harness.server.store.find("trains", id: "1")?["company"] == "Settled Rail")
            let nameless = QueuedTrain()
            let refused = await #expect(throws: APIError.self) {
                try await nameless.create(in: harness.store).settled()
            }
            #expect(refused?.code == .validationFailed && refused?.errors["company"].isEmpty == false)
        }
    }

    @Test("kept: settled() waits for the server and returns once it took the write")
    func queuedTaken() async throws {
        try await withTemporaryDirectory { directory in
            try await withHarness { harness in
                let store = try Self.queuedStore(harness, in: directory)
                let train = try await QueuedTrain.get(id: 1, in: store)
                train.company = "Kept Rail"
                let answer = try await train.save()
                #expect(answer.source == .outbox)
                let waiting = Task { try await answer.settled() }
                try await Task.sleep(for: .milliseconds(50))
                #expect(try harness.server.store.find("trains", id: "1")?["company"] == "MonoRail Co.")
                try await store.outbox.flush()
                let settled = try await waiting.value
                #expect(settled === train && !train.hasPendingChanges)
                #expect(try harness.server.store.find("trains", id: "1")?["company"] == "Kept Rail")
                // Settled already: at once.
                #expect(try await answer.settled() === train)
            }
        }
    }

    @Test("kept: a refusal and a write parked behind it reach settled() as the action's error would")
    func queuedRefused() async throws {
        try await withTemporaryDirectory { directory in
            try await withHarness { harness in
                let store = try Self.queuedStore(harness, in: directory)
                let nameless = QueuedTrain()
                nameless.numberOfCars = 3
                let created = try await nameless.create(in: store)
                let car = QueuedCar()
                car.train = nameless
                car.occupancy = 4
                let child = try await car.create(in: store)
                try await store.outbox.flush()
                let refused = await #expect(throws: APIError.self) { try await created.settled() }
                #expect(refused?.code == .validationFailed && refused?.statusCode == 422)
                #expect(refused?.errors["company"].isEmpty == false)
                #expect(nameless.rejection?.code == .validationFailed)
                let behind = await #expect(throws: APIError.self) { try await child.settled() }
                #expect(behind?.code == .dependencyRejected)
                #expect(store.outbox.parked.count == 2)

                // Saved again with a company: the new save's answer settles when the server takes it.
                nameless.company = "Named Rail"
                let again = try await nameless.save()
                try await store.outbox.flush()
                #expect(try await again.settled() === nameless)
                #expect(nameless.id?.isLocal == false && store.outbox.parked.isEmpty)
            }
        }
    }

    @Test("kept: discarded, or the waiting task cancelled: settled() throws cancelled")
    func queuedDiscardedOrCancelled() async throws {
        try await withTemporaryDirectory { directory in
            try await withHarness { harness in
                let store = try Self.queuedStore(harness, in: directory)
                let train = try await QueuedTrain.get(id: 2, in: store)
                train.numberOfCars = 9
                let answer = try await train.save()
                let waiting = Task { try await answer.settled() }
                try await Task.sleep(for: .milliseconds(20))
                waiting.cancel()
                let stopped = await #expect(throws: APIError.self) { try await waiting.value }
                #expect(stopped?.code == .cancelled)
                #expect(store.outbox.pendingCount == 1, "the write is still kept")

                try await store.outbox.discardAll()
                let discarded = await #expect(throws: APIError.self) { try await answer.settled() }
                #expect(discarded?.code == .cancelled)
                #expect(harness.server.journal.entries.allSatisfy { $0.hasPrefix("GET") })
            }
        }
    }
}
