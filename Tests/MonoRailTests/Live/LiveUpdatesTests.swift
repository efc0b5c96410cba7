import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@Suite("Live from the server", .timeLimit(.minutes(5)))
struct LiveUpdatesTests {
    /// The reference server, a store reading its changes, and a second store for another client.
    func withLiveStores(
        server: ReferenceServer.Configuration = .init(),
        configure: (inout MonoRail.Configuration) -> Void = { _ in },
        _ body: (TestAPI, ResourceStore) async throws -> Void
    ) async throws {
        try await withHarness(server: server) {
            $0.liveUpdates = .serverSentEvents(path: "/changes")
            configure(&$0)
        } _: { api in
            var other = MonoRail.Configuration.testing(api.server.baseURL)
            other.liveUpdates = nil
            let otherClient = ResourceStore(configuration: other)
            defer { api.store.liveUpdates.disconnect() }
            try await body(api, otherClient)
        }
    }

    @Test("another client's create, save and delete reach the instances and a live list, with no request of ours")
    func anotherClientsChanges() async throws {
        try await withLiveStores { api, otherClient in
            let train = try await Train.get(id: 1, in: api.store)
            let second = try await Train.get(id: 2, in: api.store)
            let all = try await Train.query(in: api.store)
            #expect(all.instances.count == 2)
            try await api.store.liveUpdates.connect()
            #expect(api.store.liveUpdates.state.isLive)
            // A first stream starts from now: what was read before it is read once more.
            #expect(
                try await eventually {
                    let entries = api.journal.entries
                    return entries.contains("GET /trains/1") && entries.contains("GET /trains/2")
                        && entries.contains { $0 == "GET /trains" || $0.hasPrefix("GET /trains?") }
                })
            try await Task.sleep(for: .milliseconds(50))
            api.journal.reset()

            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.company = "Changed elsewhere"
            try await theirs.save()
            #expect(try await eventually { train.company == "Changed elsewhere" })

            let created = Train()
            created.company = "New elsewhere"
            try await created.create(in: otherClient)
            let id = try #require(created.id)
            #expect(try await eventually { all.instances.count == 3 })
            #expect(all.instances.last?.company == "New elsewhere")
            #expect(all.instances.last === api.store.instance(of: Train.self, id: id))

            try await Train.get(id: 2, in: otherClient).delete()
            #expect(try await eventually { second.isDeleted })
            #expect(try await eventually { all.instances.count == 2 })

            // Our store sent nothing: every request after the reset was the other client's.
            #expect(
                !api.journal.entries.contains {
                    $0.hasPrefix("GET /trains") && $0 != "GET /trains/1" && $0 != "GET /trains/2"
                })
            #expect(api.journal.entries.filter { $0 == "GET /changes" }.isEmpty)
            #expect(api.store.liveUpdates.lastEventID == "3")
        }
    }

    /// Waits until the store merged the change with this id.
    func merged(_ id: Int64, in store: ResourceStore) async throws -> Bool {
        try await eventually { (store.liveUpdates.lastEventID.flatMap { Int64($0) } ?? -1) >= id }
    }

    @Test(
        "a push older than the state a GET showed changes nothing; without versions it would go back",
        arguments: [true, false])
    func stalePushAfterFreshGET(usesVersions: Bool) async throws {
        try await withLiveStores {
            if !usesVersions { $0.conventions.versionKey = nil }
        } _: { api, otherClient in
            // Connected once, for a cursor, then away while the other client writes twice.
            try await api.store.liveUpdates.connect()
            let cursor = try api.server.store.changeBounds().newest
            #expect(try await merged(cursor, in: api.store))
            api.store.liveUpdates.disconnect()
            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.company = "First"
            try await theirs.save()
            try await Task.sleep(for: .milliseconds(5))  // updated_at has millisecond steps
            theirs.company = "Second"
            try await theirs.save()
            // A fresh read shows the second state; the stream then replays the first one, then the second.
            let train = try await Train.get(id: 1, in: api.store)
            #expect(train.company == "Second")
            let (companyChanges, sentinels) = (Locked(0), Locked(0))
            let watching = Task {
                for await update in train.updates where update.kind == .merged {
                    if update.fields.contains("company") { companyChanges.withLock { $0 += 1 } }
                    if update.fields.contains("numberOfCars") { sentinels.withLock { $0 += 1 } }
                }
            }
            defer { watching.cancel() }
            try await api.store.liveUpdates.connect()
            #expect(try await merged(cursor + 2, in: api.store))
            #expect(train.company == "Second")
            // A change after them, told after them: once it is, they were told too.
            theirs.numberOfCars = 12
            try await theirs.save()
            #expect(try await eventually { sentinels.withLock { $0 } == 1 })
            if usesVersions {
                #expect(companyChanges.withLock { $0 } == 0)
            } else {
                // Arrival order alone: the replayed first state showed, then the second again.
                #expect(try await eventually { companyChanges.withLock { $0 } == 2 })
            }
        }
    }

    @Test("a push for a record with an unsaved edit becomes its server base; the edit stays, and is saved")
    func pushDuringUnsavedEdit() async throws {
        try await withLiveStores { api, otherClient in
            let train = try await Train.get(id: 1, in: api.store)
            try await api.store.liveUpdates.connect()
            train.company = "Ours, not saved"
            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.company = "Theirs"
            theirs.maxSpeed = 99
            try await theirs.save()
            #expect(try await eventually { train.maxSpeed == 99 })
            #expect(train.company == "Ours, not saved")
            #expect(train.changes["company"]?.old == "Theirs")
            try await train.save()
            #expect(try api.server.store.find("trains", id: "1")?["company"] == "Ours, not saved")
            #expect(try api.server.store.find("trains", id: "1")?["max_speed"] == 99)
        }
    }

    @Test("kept writes stay on top of pushes and are still sent; our own write echoed back changes nothing")
    func keptWritesAndEchoes() async throws {
        try await withLiveStores {
            $0.writePolicy = .queued
            $0.allowsQueuedWritesLostOnQuit = true
            // A kept write sends what it was kept with: the changed fields, to a server that takes them
            // alone. (A whole-record PUT sends the record as it was saved: see OutboxTimeTests.)
            $0.conventions.updateMethod = .patch
            $0.conventions.sendsOnlyChanges = true
        } _: { api, otherClient in
            let train = try await Train.get(id: 1, in: api.store)
            try await api.store.liveUpdates.connect()
            await api.store.outbox.pause()
            train.company = "Kept"
            try await train.save()
            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.maxSpeed = 77
            theirs.company = "Theirs"
            try await theirs.save()
            #expect(try await eventually { train.maxSpeed == 77 })
            #expect(train.company == "Kept")
            #expect(train.hasPendingChanges)

            let updates = Locked<[ResourceUpdate<Train>]>([])
            let watching = Task {
                for await update in train.updates { updates.withLock { $0.append(update) } }
            }
            defer { watching.cancel() }
            try await Task.sleep(for: .milliseconds(20))
            api.store.outbox.isPaused = false
            try await api.store.outbox.flush()
            let written = try api.server.store.changeBounds().newest
            #expect(try await merged(written, in: api.store))
            #expect(train.company == "Kept")
            #expect(train.maxSpeed == 77)
            #expect(!train.hasPendingChanges)
            // The save's answer and its echo bring nothing the instance does not show.
            #expect(updates.withLock { $0 }.allSatisfy { $0.fields.isEmpty || $0.kind != .merged })
            #expect(try api.server.store.find("trains", id: "1")?["company"] == "Kept")
        }
    }

    @Test("a change made between the app's read and its first stream is not lost: the first stream reads again")
    func firstConnectLeavesNoGap() async throws {
        try await withLiveStores { api, otherClient in
            let train = try await Train.get(id: 1, in: api.store)
            let all = try await Train.query(in: api.store)
            // Changed after our read, before the stream opens "from now": in no event we will get.
            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.company = "Changed in the gap"
            try await theirs.save()
            let made = Train()
            made.company = "Made in the gap"
            try await made.create(in: otherClient)
            try await api.store.liveUpdates.connect()
            #expect(try await eventually { train.company == "Changed in the gap" })
            #expect(try await eventually { all.instances.contains { $0.company == "Made in the gap" } })
        }
    }

    @Test("a push for a model the app has not used yet is kept, not passed over: applied when the model is first used")
    func pushForModelNotYetUsed() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let storage = try SQLiteStorage(path: directory.appendingPathComponent("live.sqlite").path)
            try await withLiveStores {
                $0.storage = storage
            } _: { api, otherClient in
                _ = try await Train.get(id: 1, in: api.store)
                try await api.store.liveUpdates.connect()
                #expect(try await eventually { api.store.liveUpdates.lastEventID != nil })
                let before = try #require(api.store.liveUpdates.lastEventID)
                // Cars: not used by this store, nor registered.
                let car = try await Car.get(id: 1, in: otherClient)
                car.occupancy = 77
                try await car.save()
                let theirs = try await Train.get(id: 1, in: otherClient)
                theirs.company = "After the car"
                try await theirs.save()
                let newest = try api.server.store.changeBounds().newest
                #expect(try await merged(newest, in: api.store), "the stream went on past it")
                try await storage.flush()
                #expect(try await storage.liveCursor(feed: "/changes") == before, "storage keeps no cursor past it")

                // First use of Car: the kept change is applied, and the cursor moves on.
                _ = try await Car.get(id: 2, in: api.store)
                let key = RecordKey(model: "car", id: "1")
                for _ in 0..<500 where try await storage.records([key])[key] == nil {
                    try await Task.sleep(for: .milliseconds(20))
                }
                let cached = try await Car.get(id: 1, policy: .cacheOnly, in: api.store)
                #expect(cached.occupancy == 77)
                try await storage.flush()
                #expect(try await storage.liveCursor(feed: "/changes") == String(newest))
            }
        }
    }

    @Test("a push moves a record into a filtered live query and out of it")
    func filteredLiveQuery() async throws {
        try await withLiveStores { api, otherClient in
            let express = try await Train.query(where: ["company": "Express"], in: api.store)
            #expect(express.instances.isEmpty)
            try await api.store.liveUpdates.connect()
            let theirs = try await Train.get(id: 2, in: otherClient)
            theirs.company = "Express"
            try await theirs.save()
            #expect(try await eventually { express.instances.map(\.id) == [2] })
            theirs.company = "Slow"
            try await theirs.save()
            #expect(try await eventually { express.instances.isEmpty })
        }
    }

    @Test("a cursor older than the changes the server keeps: reset, every held instance and live query read again")
    func resetAfterTooLongAway() async throws {
        try await withLiveStores(server: .init(changeFeed: ChangeFeedSettings(retention: 1))) { api, otherClient in
            let train = try await Train.get(id: 1, in: api.store)
            let second = try await Train.get(id: 2, in: api.store)
            let all = try await Train.query(in: api.store)
            // Read and let go: in the record cache only.
            _ = try await Car.get(id: 1, in: api.store)
            try await api.store.liveUpdates.connect()
            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.company = "Seen"
            try await theirs.save()
            #expect(try await eventually { train.company == "Seen" })
            api.store.liveUpdates.disconnect()

            // Away for longer than the log keeps: 300 changes, the log keeps the last.
            for index in 0..<300 {
                theirs.numberOfCars = index
                try await theirs.save()
            }
            theirs.company = "Changed while away"
            try await theirs.save()
            try await Train.get(id: 2, in: otherClient).delete()
            let created = Train()
            created.company = "Created while away"
            try await created.create(in: otherClient)

            let resets = Locked(0)
            let listening = Task {
                for await event in api.store.liveUpdates.events {
                    if case .reset = event { resets.withLock { $0 += 1 } }
                }
            }
            defer { listening.cancel() }
            try await Task.sleep(for: .milliseconds(20))
            api.journal.reset()
            try await api.store.liveUpdates.connect()
            #expect(try await eventually { resets.withLock { $0 } == 1 })
            #expect(train.company == "Changed while away")
            #expect(train.numberOfCars == 299)
            #expect(second.isDeleted)
            #expect(all.instances.map(\.company) == ["Changed while away", "Created while away"])
            let newest = try api.server.store.changeBounds().newest
            #expect(api.store.liveUpdates.lastEventID == String(newest))
            // Read again: the list, and each record held.
            #expect(api.journal.entries.contains("GET /trains"))
            #expect(api.journal.entries.contains("GET /trains/1"))
            // What only the record cache holds is kept, marked stale: a time to live asks again.
            let key = RecordKey(model: "car", id: "1")
            let stored = try await api.store.configuration.storage?.records([key])[key]
            #expect(stored?.fetchedAt == Date(timeIntervalSince1970: 0))
        }
    }

    @Test("pause() closes the stream as the app leaves for the background; resume() goes on from the cursor")
    func pauseAndResume() async throws {
        try await withLiveStores { api, otherClient in
            let train = try await Train.get(id: 1, in: api.store)
            try await api.store.liveUpdates.connect()
            // From now: the server's first line gives the cursor.
            #expect(try await eventually { api.store.liveUpdates.lastEventID != nil })
            api.store.liveUpdates.pause()
            guard case .stopped(nil) = api.store.liveUpdates.state else {
                Issue.record("still \(api.store.liveUpdates.state)")
                return
            }
            let cursor = api.store.liveUpdates.lastEventID
            let theirs = try await Train.get(id: 1, in: otherClient)
            theirs.company = "While in the background"
            try await theirs.save()
            try await Task.sleep(for: .milliseconds(50))
            #expect(train.company != "While in the background")
            api.store.liveUpdates.resume()
            #expect(try await eventually { train.company == "While in the background" })
            #expect(api.store.liveUpdates.state.isLive)
            #expect(api.journal.requests.last { $0.line == "GET /changes" }?.lastEventID == cursor)
            // Resuming what was not paused does nothing.
            api.store.liveUpdates.resume()
            #expect(api.journal.entries.filter { $0 == "GET /changes" }.count == 2)
        }
    }
}
