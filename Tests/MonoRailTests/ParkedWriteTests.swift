import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import Testing

/// Writes the server refuses or keeps failing: parked with their dependents while every other
/// write goes on, kept parked across a restart, retried or discarded by the app.
@Suite("The outbox: parked writes", .timeLimit(.minutes(2)))
struct ParkedWriteTests {
    static func configuration(_ url: URL?, limits: OutboxLimits = OutboxLimits(maximumFailures: 2))
        -> MonoRail.Configuration
    {
        var configuration = MonoRail.Configuration(apiRootURL: url, retryPolicy: .none)
        configuration.writePolicy = .queued
        configuration.outboxLimits = limits
        configuration.models.register(QueuedTrain.self, QueuedCar.self)
        return configuration
    }

    /// Flushes until a write is parked; a write waiting after a failed answer makes `flush()` throw
    /// until its next attempt is due.
    static func flushUntilParked(_ outbox: Outbox, count: Int) async throws {
        for _ in 0..<100 where outbox.parked.count < count {
            try? await outbox.flush()
            if outbox.parked.count < count { try await Task.sleep(for: .milliseconds(100)) }
        }
    }

    @Test("a write the server always fails (500) parks after the limit with its dependents; 50 others land")
    func alwaysFailing() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("store.sqlite").path
            try await withHarness { harness in
                let store = ResourceStore(
                    configuration: Self.configuration(harness.server.baseURL), storage: try SQLiteStorage(path: path))
                let outbox = store.outbox
                outbox.isPaused = true
                let events = outbox.events
                let refused = try await QueuedTrain.get(id: 2, in: store)
                harness.server.refusals.refuse("PUT /trains/2", status: 500)
                refused.numberOfCars = 5
                try await refused.save()
                refused.company = "Later Rail"  // a later write of the same record: depends on it
                try await refused.save()
                var independent: [QueuedTrain] = []
                for index in 0..<50 {
                    let train = QueuedTrain()
                    train.company = "Independent \(index)"
                    try await train.create(in: store)
                    independent.append(train)
                }
                harness.server.journal.reset()
                try await Self.flushUntilParked(outbox, count: 2)

                let parked = outbox.parked
                #expect(parked.map(\.verb) == [.update, .update])
                #expect(parked.first?.parking?.statusCode == 500 && parked.first?.failures == 2)
                #expect(parked.last?.parking?.code == .dependencyRejected)
                #expect(outbox.pendingCount == 0)
                let sent = harness.server.journal.entries
                #expect(sent.filter { $0 == "PUT /trains/2" }.count == 2, "tried up to the limit, then parked")
                #expect(sent.filter { $0 == "POST /trains" }.count == 50, "the independent writes went on")
                #expect(independent.allSatisfy { $0.id?.isLocal == false && !$0.hasPendingChanges })
                #expect(refused.numberOfCars == 5 && refused.company == "Later Rail", "the app's values stay")
                #expect(refused.hasChanges && !refused.hasPendingChanges && refused.rejection?.statusCode == 500)
                var seen: [String] = []
                for await event in events {
                    seen.append(OutboxTests.name(event))
                    if seen.contains(where: { $0.hasPrefix("parked \(parked[1].sequence)") }) { break }
                }
                #expect(seen.contains("parked \(parked[0].sequence) httpStatus"))
                #expect(seen.contains("retrying \(parked[0].sequence)"))
                await outbox.pause()

                // A restart finds them parked, and shows them on the instance as they were.
                let restarted = ResourceStore(
                    configuration: Self.configuration(harness.server.baseURL), storage: try SQLiteStorage(path: path))
                try await restarted.outbox.load()
                #expect(restarted.outbox.parked == parked)
                #expect(restarted.outbox.pendingCount == 0)
                let again = try #require(restarted.instance(of: QueuedTrain.self, id: 2))
                #expect(again.numberOfCars == 5 && again.company == "Later Rail")
                #expect(again.hasChanges && again.rejection?.statusCode == 500)
                harness.server.journal.reset()
                try await restarted.outbox.flush()
                #expect(harness.server.journal.entries.isEmpty, "a parked write is not sent on its own")

                // Fixed on the server, retried: sent once each, in order.
                harness.server.refusals.lift("PUT /trains/2")
                try await restarted.outbox.retry(parked[0])
                try await restarted.outbox.flush()
                #expect(harness.server.journal.entries == ["PUT /trains/2", "PUT /trains/2"])
                #expect(restarted.outbox.parked.isEmpty && restarted.outbox.pendingCount == 0)
                let stored = try harness.server.store.find("trains", id: "2")
                #expect(stored?["number_of_cars"] == 5 && stored?["company"] == "Later Rail")
                #expect(again.rejection == nil && !again.hasChanges && !again.hasPendingChanges)
                #expect(try await SQLiteStorage(path: path).pendingWrites().isEmpty)
            }
        }
    }

    @Test("a 400 parks at once: not tried again; discarding it rolls the instance back")
    func refusedAndDiscarded() async throws {
        let configure: (inout MonoRail.Configuration) -> Void = { configuration in
            configuration = Self.configuration(configuration.apiRootURL)
            configuration.allowsQueuedWritesLostOnQuit = true
        }
        try await withHarness(configure: configure) { harness in
            let outbox = harness.store.outbox
            outbox.isPaused = true
            let train = try await QueuedTrain.get(id: 1, in: harness.store)
            let other = try await QueuedTrain.get(id: 2, in: harness.store)
            harness.server.refusals.refuse("PUT /trains/1", status: 400)
            train.numberOfCars = 12
            try await train.save()
            other.numberOfCars = 3
            try await other.save()
            harness.server.journal.reset()
            try await outbox.flush()
            #expect(harness.server.journal.entries == ["PUT /trains/1", "PUT /trains/2"])
            let parked = try #require(outbox.parked.first)
            #expect(parked.parking?.statusCode == 400 && parked.failures == 0)
            #expect(train.numberOfCars == 12 && train.hasChanges && train.rejection?.statusCode == 400)
            try await outbox.discard(parked)
            #expect(outbox.parked.isEmpty && outbox.pendingCount == 0)
            #expect(train.numberOfCars == 5 && !train.hasChanges, "back at the server's state")
            #expect(train.rejection == nil)
            try await outbox.flush()
            #expect(harness.server.journal.entries == ["PUT /trains/1", "PUT /trains/2"], "never sent again")
            #expect(try harness.server.store.find("trains", id: "2")?["number_of_cars"] == 3)
        }
    }

    @Test("a server that cannot be reached parks nothing, however many attempts")
    func unreachableParksNothing() async throws {
        var configuration = Self.configuration(URL(string: "http://127.0.0.1:1"))
        configuration.allowsQueuedWritesLostOnQuit = true
        let store = ResourceStore(configuration: configuration)
        store.outbox.isPaused = true
        let train = QueuedTrain()
        train.company = "Offline Rail"
        try await train.create(in: store)
        for _ in 0..<5 { await #expect(throws: APIError.self) { try await store.outbox.flush() } }
        #expect(store.outbox.parked.isEmpty && store.outbox.pendingCount == 1)
        #expect(store.outbox.pending.first?.attempts == 5 && store.outbox.pending.first?.failures == 0)
    }
}
