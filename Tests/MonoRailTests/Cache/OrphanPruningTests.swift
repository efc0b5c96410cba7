import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Authoritative lists remove what the server no longer lists, when a model opts in.
@Suite("Orphan pruning", .timeLimit(.minutes(5)))
struct OrphanPruningTests {
    static func pruning(_ configuration: inout MonoRail.Configuration) { configuration.prunesOrphans = true }

    static func deleteOnServer(_ id: Int, _ harness: TestAPI) throws {
        let store = harness.server.store
        let resource = try #require(store.schema.resource(plural: "trains"))
        #expect(try store.delete(resource, id: String(id)))
    }

    @Test("Train.get() forgets a record the server dropped, in memory and in the record cache")
    func unheld() async throws {
        try await withHarness(configure: Self.pruning) { harness in
            let store = harness.store
            let updates = Train.updates(in: store)
            _ = try await Train.get(in: store)
            // Cached: a cache-only read of train 2 answers.
            #expect(try await Train.get(id: 2, policy: .cacheOnly, in: store).id == 2)
            try Self.deleteOnServer(2, harness)
            let trains = try await Train.get(in: store)
            #expect(trains.map(\.id) == [1])
            #expect(store.instance(of: Train.self, id: 2) == nil)
            let error = try await #require(throws: APIError.self) {
                try await Train.get(id: 2, policy: .cacheOnly, in: store)
            }
            #expect(error.code == .notCached)
            var deleted: [ResourceID?] = []
            for await update in updates where update.kind == .deleted {
                deleted.append(update.instance.id)
                break
            }
            #expect(deleted == [2])
        }
    }

    @Test("an unfiltered live query's refresh marks a held instance deleted and drops it from other queries")
    func held() async throws {
        try await withHarness(configure: Self.pruning) { harness in
            let store = harness.store
            let second = try await Train.get(id: 2, in: store)
            let all = try await Train.query(order: [.ascending("id")], in: store)
            let german = try await Train.query(where: ["company": "Deutsche Bahn AG"], in: store)
            #expect(all.instances.map(\.id) == [1, 2])
            #expect(german.instances.map(\.id) == [2])
            try Self.deleteOnServer(2, harness)
            try await all.refresh()
            #expect(all.instances.map(\.id) == [1])
            #expect(second.isDeleted)
            #expect(german.instances.isEmpty)
            #expect(store.instance(of: Train.self, id: 2) == nil)
            #expect(try await Train.get(id: 1, in: store).isDeleted == false)
        }
    }

    @Test("an authoritative filtered query prunes only what its filter matches")
    func authoritativeFilter() async throws {
        try await withHarness(configure: Self.pruning) { harness in
            let store = harness.store
            let first = try await Train.get(id: 1, in: store)
            let second = try await Train.get(id: 2, in: store)
            let mono = try await Train.query(where: ["company": "MonoRail Co."], authoritative: true, in: store)
            let loose = try await Train.query(where: ["company": "Deutsche Bahn AG"], in: store)
            try Self.deleteOnServer(1, harness)
            try Self.deleteOnServer(2, harness)
            try await loose.refresh()
            // Not authoritative: train 2 leaves the query, and lives on.
            #expect(loose.instances.isEmpty)
            #expect(!second.isDeleted)
            try await mono.refresh()
            #expect(mono.instances.isEmpty)
            #expect(first.isDeleted)
            #expect(!second.isDeleted)
        }
    }

    @Test("without opting in, nothing is pruned")
    func optIn() async throws {
        try await withHarness { harness in
            let store = harness.store
            let second = try await Train.get(id: 2, in: store)
            try Self.deleteOnServer(2, harness)
            #expect(try await Train.get(in: store).map(\.id) == [1])
            #expect(!second.isDeleted)
            #expect(store.instance(of: Train.self, id: 2) === second)
        }
    }

    @Test("a record fetched after the list was asked for stays; one fetched before goes")
    func fetchedAfter() async throws {
        let canned = try await ScriptedServer.start()
        defer { Task { await canned.stop() } }
        var configuration = MonoRail.Configuration.testing(canned.baseURL)
        configuration.prunesOrphans = true
        let store = ResourceStore(configuration: configuration)
        canned.respond(to: "GET /trains/2", body: #"{"train": {"id": 2, "company": "B"}}"#)
        canned.respond(to: "GET /trains/3", body: #"{"train": {"id": 3, "company": "C"}}"#)
        canned.respond(
            to: "GET /trains", body: #"{"trains": [{"id": 1, "company": "A"}]}"#, headers: ["X-Total-Count": "1"],
            after: .milliseconds(400))
        let before = try await Train.get(id: 3, in: store)
        let list = Task { try await Train.get(in: store) }
        try await Task.sleep(for: .milliseconds(150))
        let after = try await Train.get(id: 2, in: store)
        #expect(try await list.value.map(\.id) == [1])
        #expect(before.isDeleted)
        #expect(!after.isDeleted)
        #expect(store.instance(of: Train.self, id: 2) === after)
    }
}
