import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// The examples of the article "Offline writes: the outbox", run against the reference server; a
/// test checks they still read as in the article.
@Suite("README offline")
struct ReadmeOfflineTests {
    @Test("the example matches the README")
    func matchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeFormatTests.readmeBlocks()
        let region = source.components(separatedBy: "// README OFFLINE BEGIN\n")[1]
            .components(separatedBy: "// README OFFLINE END")[0]
        #expect(blocks.contains(ReadmeFormatTests.normalise(region)))
    }

    @Test("the example runs: kept, shown, a local id, sent once each")
    func example() async throws {
        try await withTemporaryDirectory { folder in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("app.sqlite").path
            try await withHarness { harness in
                let configuration = harness.store.configuration
                // README OFFLINE BEGIN
                var offline = configuration
                offline.writePolicy = .queued  // or .queuedWhenOffline: sent at once unless the server is away
                let store = ResourceStore(configuration: offline, storage: try SQLiteStorage(path: path))

                let train = try await Train.get(id: 1, in: store)
                train.company = "Offline Rail"
                try await train.save()  // applied and on disk at once; sent in the background
                print(train.hasPendingChanges, train.pendingChanges.keys)  // true ["company"]
                let line = Train()
                line.company = "New Line"
                try await line.create(in: store)  // a local id until the server gives it its own
                print(store.outbox.pendingCount)  // 2
                try await store.outbox.flush()  // each record's writes in order, each under its Idempotency-Key
                print(line.id?.isLocal == false)  // true: the server's id, in the same instance
                // README OFFLINE END
                #expect(line.id?.isLocal == false && !train.hasPendingChanges)
                #expect(try harness.server.store.find("trains", id: "1")?["company"] == "Offline Rail")
                #expect(try harness.server.idempotencyKeys().count == 2)
                #expect(
                    harness.journal.entries.filter { !$0.hasPrefix("GET") }.sorted() == [
                        "POST /trains", "PUT /trains/1",
                    ])
            }
        }
    }

    @Test("the parked-write example matches the README")
    func parkedMatchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let region = source.components(separatedBy: "// README PARKED BEGIN\n")[1]
            .components(separatedBy: "// README PARKED END")[0]
        #expect(try ReadmeFormatTests.readmeBlocks().contains(ReadmeFormatTests.normalise(region)))
    }

    @Test("the parked-write example runs: the typed value kept with its error, then sent fixed")
    func parked() async throws {
        try await withTemporaryDirectory { folder in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("app.sqlite").path
            try await withHarness { harness in
                var offline = harness.store.configuration
                offline.writePolicy = .queued
                let store = ResourceStore(configuration: offline, storage: try SQLiteStorage(path: path))
                let train = try await Train.get(id: 1, in: store)
                let events = store.outbox.events
                // README PARKED BEGIN
                train.company = ""  // the server requires one: 422
                try await train.save()
                try await store.outbox.flush()  // parked, not thrown; the writes that do not depend on it went on
                print(train.company == "", train.errors["company"])  // true ["can't be blank"]
                for write in store.outbox.parked {
                    print(write.model, write.parking?.statusCode ?? 0)  // train 422
                }
                train.company = "Fixed Rail"
                try await train.save()  // sent in the parked write's place
                try await store.outbox.flush()
                // README PARKED END
                var seen: [String] = []
                for await event in events {
                    switch event {
                    case .parked(let write, let error): seen.append("parked \(write.model) \(error.statusCode ?? 0)")
                    case .confirmed(let write): seen.append("confirmed \(write.model)")
                    default: continue
                    }
                    if seen.count == 2 { break }
                }
                #expect(seen == ["parked train 422", "confirmed train"])
                #expect(store.outbox.parked.isEmpty && train.errors.isEmpty && !train.hasChanges)
                #expect(try harness.server.store.find("trains", id: "1")?["company"] == "Fixed Rail")
            }
        }
    }
}
