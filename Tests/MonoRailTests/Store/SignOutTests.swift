import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import Testing

/// `store.clear()` for sign-out: nothing of the last account stays, on screen or on disk.
@Suite("Sign-out", .timeLimit(.minutes(5)))
struct SignOutTests {
    @Test("held instances are emptied and marked deleted, observers are told, caches and outbox are empty")
    func clearEmptiesHeldInstances() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("account.sqlite").path
            try await withHarness { harness in
                var configuration = MonoRail.Configuration.testing(harness.server.baseURL)
                configuration.writePolicy = .queued
                configuration.models.register(Train.self)
                let store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
                let train = try await Train.get(id: 1, in: store)
                let trains = try await Train.get(in: store)
                let query = try await Train.query(in: store)
                #expect(query.instances.count == 2)
                store.outbox.isPaused = true
                train.maxSpeed = 12
                try await train.save()
                #expect(store.outbox.pendingCount == 1)

                let fired = Counter()
                withObservationTracking {
                    _ = train.company
                } onChange: {
                    fired.increment()
                }
                withObservationTracking {
                    _ = train.id
                } onChange: {
                    fired.increment()
                }
                let updates = Train.updates(in: store)

                try await store.clear()

                for instance in trains {
                    #expect(instance.isDeleted)
                    #expect(instance.id == nil)
                    #expect(instance.company == nil && instance.maxSpeed == nil && instance.tags.isEmpty)
                    #expect(!instance.hasChanges && !instance.hasPendingChanges)
                }
                #expect(fired.value == 2)
                var told: [ResourceUpdate<Train>.Kind] = []
                for await update in updates {
                    told.append(update.kind)
                    if told.count == 2 { break }
                }
                #expect(told == [.deleted, .deleted])
                #expect(query.instances.isEmpty)
                #expect(store.count == 0)
                #expect(store.outbox.pendingCount == 0)
                let error = try await #require(throws: APIError.self) {
                    try await Train.get(id: 1, policy: .cacheOnly, in: store)
                }
                #expect(error.code == .notCached)
                let reopened = try SQLiteStorage(path: path)
                #expect(try reopened.pendingWrites().isEmpty)
                #expect(try await reopened.records([RecordKey(model: "train", id: "1")]).isEmpty)
                // The next account's read makes a new instance.
                let next = try await Train.get(id: 1, in: store)
                #expect(next !== train && next.company == "MonoRail Co." && !next.isDeleted)
            }
        }
    }
}
