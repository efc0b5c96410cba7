import Foundation
import Logging
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// `.queued` means kept across a restart, or refused: never a silent fall back to memory.
@Suite("Queued writes are durable or refused", .timeLimit(.minutes(5)))
struct QueuedDurabilityTests {
    static func configuration(_ url: URL, _ policy: WritePolicy, log: LogCapture) -> MonoRail.Configuration {
        var configuration = MonoRail.Configuration.testing(apiRootURL: url)
        configuration.writePolicy = policy
        configuration.logger = log.logger(level: .notice)
        return configuration
    }

    @Test(
        "with the in-memory record cache, the store says so when made and the first write throws",
        arguments: [
            WritePolicy.queued, .queuedWhenOffline,
        ])
    func refused(policy: WritePolicy) async throws {
        try await withReferenceServer(schema: .trains) { harness in
            let log = LogCapture()
            let store = ResourceStore(configuration: Self.configuration(harness.server.baseURL, policy, log: log))
            #expect(log.all.contains { $0.level == .error && $0.message.contains("allowsQueuedWritesLostOnQuit") })
            let train = try await Train.get(id: 1, in: store)
            train.company = "Typed by the user"
            harness.journal.reset()
            let error = try await #require(throws: APIError.self) { try await train.save() }
            #expect(error.code == .invalidConfiguration)
            #expect(store.outbox.pendingCount == 0)
            #expect(harness.journal.entries.isEmpty)
            // Nothing was lost: the edit is still there, unsaved.
            #expect(train.company == "Typed by the user" && train.hasChanges && !train.hasPendingChanges)
        }
    }

    @Test("configure that turns queuing on without durable storage is diagnosed too")
    func diagnosedAtConfigure() async throws {
        let log = LogCapture()
        let store = ResourceStore(
            configuration: MonoRail.Configuration.testing(apiRootURL: URL(string: "http://127.0.0.1:1")))
        store.configure { $0.logger = log.logger(level: .notice) }
        #expect(log.all.isEmpty)
        store.configure { $0.writePolicy = .queued }
        #expect(log.all.filter { $0.level == .error }.count == 1)
    }

    @Test("opting into memory by name keeps writes until quit; SQLite keeps them with no opt-in")
    func keptWhenAllowed() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try await withReferenceServer(schema: .trains) { harness in
                let log = LogCapture()
                var memory = Self.configuration(harness.server.baseURL, .queued, log: log)
                memory.allowsQueuedWritesLostOnQuit = true
                var disk = Self.configuration(harness.server.baseURL, .queued, log: log)
                disk.storage = try SQLiteStorage(path: directory.appendingPathComponent("kept.sqlite").path)
                for configuration in [memory, disk] {
                    let store = ResourceStore(configuration: configuration)
                    let train = try await Train.get(id: 2, in: store)
                    train.numberOfCars = 30
                    try await train.save()
                    try await store.outbox.flush()
                    #expect(store.outbox.pendingCount == 0)
                    #expect(try harness.server.store.find("trains", id: "2")?["number_of_cars"] == 30)
                }
                #expect(!log.all.contains { $0.level == .error })
            }
        }
    }
}
