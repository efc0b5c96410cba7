import Foundation
import MonoRail
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
}
