import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// `clear()` is a fence: what was asked for before it and answers after it is dropped — not merged
/// into the next account's instances, not kept on disk.
@Suite("Sign-out fences work in flight", .timeLimit(.minutes(5)))
struct SignOutFenceTests {
    /// The reference server holding these answers back, made as the requests arrive.
    static let faults = FaultInjection(slowResponses: [
        "/trains/1?v=slow": .milliseconds(1500), "/trains?v=slow": .milliseconds(1500),
    ])

    @Test("a read and a list read held until after clear() are dropped: nothing in memory, nothing on disk")
    func heldReads() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("account.sqlite").path
            try await withHarness(server: .init(faults: Self.faults)) { harness in
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                let read = Task { try await Train.get(id: 1, parameters: ["v": "slow"], in: store) }
                let list = Task { try await Train.get(path: "/trains", parameters: ["v": "slow"], in: store) }
                #expect(
                    try await eventually {
                        let entries = harness.journal.entries
                        return entries.contains("GET /trains/1?v=slow") && entries.contains("GET /trains?v=slow")
                    })
                try await store.clear()

                let readError = await #expect(throws: APIError.self) { try await read.value }
                #expect(readError?.code == .cancelled)
                let listError = await #expect(throws: APIError.self) { try await list.value }
                #expect(listError?.code == .cancelled)
                #expect(store.instance(of: Train.self, id: 1) == nil)
                let cached = await #expect(throws: APIError.self) {
                    try await Train.get(id: 1, policy: .cacheOnly, in: store)
                }
                #expect(cached?.code == .notCached)
                try await storage.flush()
                #expect(try await storage.records([RecordKey(model: "train", id: "1")]).isEmpty)
                #expect(try await storage.records([RecordKey(model: "train", id: "2")]).isEmpty)
                // After the fence the store works as before, for the next account.
                #expect(try await Train.get(id: 1, in: store).company == "MonoRail Co.")
            }
        }
    }

    @Test("a query's refresh and next page held until after clear() are dropped: the queries and the file stay empty")
    func heldRefreshAndNextPage() async throws {
        let transport = FaultTransport.underTest()
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("account.sqlite").path
            try await withHarness {
                $0.transport = transport
            } _: { harness in
                let trains = try #require(ServerSchema.trains.resources.first)
                for number in 1...4 {
                    _ = try harness.server.store.create(
                        trains, attributes: ["company": .string("C\(number)"), "in_service": true, "tags": []])
                }
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                let refreshed = try await Train.query(pageSize: 2, in: store)
                let paged = try await Train.query(pageSize: 2, in: store)
                let asked = harness.journal.entries.count
                transport.holdAnswers(to: "GET /trains", for: .seconds(3))
                let refresh = Task { try await refreshed.refresh() }
                let nextPage = Task { try await paged.loadNextPage() }
                #expect(paged.hasNextPage, "the server pages by its headers")
                #expect(try await eventually { harness.journal.entries.count >= asked + 2 })
                try await store.clear()

                let refreshError = await #expect(throws: APIError.self) { try await refresh.value }
                #expect(refreshError?.code == .cancelled)
                let pageError = await #expect(throws: APIError.self) { try await nextPage.value }
                #expect(pageError?.code == .cancelled, "\(String(describing: pageError))")
                #expect(refreshed.instances.isEmpty && paged.instances.isEmpty)
                #expect(store.instances(of: Train.self).isEmpty)
                try await storage.flush()
                let keys = (1...6).map { RecordKey(model: "train", id: "\($0)") }
                #expect(try await storage.records(keys).isEmpty)
            }
        }
    }

    @Test(
        "an outbox write's answer held until after clear() is dropped: the server has it, the app and the file do not")
    func heldOutboxAnswer() async throws {
        let transport = FaultTransport.underTest()
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("account.sqlite").path
            try await withHarness {
                OutboxTests.queued(&$0)
                $0.transport = transport
            } _: { harness in
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                await store.outbox.pause()
                let made = QueuedTrain()
                made.company = "Signed out meanwhile"
                try await made.create(in: store)
                transport.holdAnswers(to: "POST /trains", for: .seconds(3))
                let flushing = Task { try? await store.outbox.flush() }
                let trains = try #require(ServerSchema.trains.resources.first)
                let created = try await eventually {
                    (try? harness.server.store.list(trains, filters: ["company": "Signed out meanwhile"]).total) == 1
                }
                #expect(created, "the write reached the server before the sign-out")
                try await store.clear()
                await flushing.value

                let record = try #require(
                    try harness.server.store.list(trains, filters: ["company": "Signed out meanwhile"]).records.first)
                let id = try #require(record["id"]?.intValue.map { ResourceID.int(Int64($0)) })
                #expect(store.instance(of: QueuedTrain.self, id: id) == nil)
                #expect(made.isDeleted && made.id == nil, "emptied by the sign-out, not filled by the late answer")
                #expect(store.outbox.pendingCount == 0 && store.outbox.parked.isEmpty)
                try await storage.flush()
                #expect(try await storage.records([RecordKey(model: "train", id: id.description)]).isEmpty)
                #expect(try storage.pendingWrites().isEmpty)
            }
        }
    }

    @Test("a first stream's catch-up read under way at clear() forgets nothing of the next account; no cursor kept")
    func heldCatchUpRead() async throws {
        let transport = FaultTransport.underTest()
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("account.sqlite").path
            try await withHarness {
                $0.liveUpdates = .serverSentEvents(path: "/changes")
                $0.transport = transport
            } _: { harness in
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                defer { store.liveUpdates.disconnect() }
                // The first account reads train 2, which is then deleted on its server: the first
                // stream's catch-up read of it would be answered 404, after the sign-out.
                let held = try await Train.get(id: 2, in: store)
                let trains = try #require(ServerSchema.trains.resources.first)
                #expect(try harness.server.store.delete(trains, id: "2"))
                transport.holdAnswers(to: "GET /trains/2", for: .seconds(3))
                let connecting = Task { try? await store.liveUpdates.connect() }
                #expect(try await eventually { harness.journal.entries.filter { $0 == "GET /trains/2" }.count == 2 })
                try await store.clear()

                // The next account's server has a train 2 of its own, read and stored before the
                // first account's answer comes.
                let next = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
                store.configure { $0.apiRootURL = next.baseURL }
                let theirs = try await Train.get(id: 2, in: store)
                await connecting.value
                try await Task.sleep(for: .milliseconds(3100))

                #expect(!theirs.isDeleted && store.instance(of: Train.self, id: 2) === theirs)
                #expect(held.isDeleted && held.id == nil, "emptied by the sign-out")
                try await storage.flush()
                #expect(try await storage.records([RecordKey(model: "train", id: "2")]).count == 1)
                #expect(try await storage.liveCursor(feed: "/changes") == nil)
                #expect(store.liveUpdates.lastEventID == nil)
                await next.stop()
            }
        }
    }
}
