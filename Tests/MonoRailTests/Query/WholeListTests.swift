import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Whole means proven, the same way for `get()`, `getAll()`, queries and has-many loads: a bare index
/// proves its end by its next page, a silently capped one never passes for whole, and a walk by page
/// numbers that another client's delete shifted prunes nothing.
@Suite("Whole lists: proven, never assumed", .timeLimit(.minutes(5)))
struct WholeListTests {
    static func pruning(_ configuration: inout MonoRail.Configuration) {
        configuration.prunesOrphans = true
    }

    /// Adds trains on the server until it holds `count`.
    static func seed(_ api: TestAPI, count: Int) throws {
        let trains = try #require(ServerSchema.trains.resources.first)
        for index in 3...count {
            _ = try api.server.store.create(
                trains, attributes: ["company": .string("Train \(index)"), "in_service": true, "tags": []])
        }
    }

    /// Another client deletes a train.
    static func deleteOnServer(_ api: TestAPI, id: Int) async throws {
        let other = ResourceStore(configuration: .testing(api.server.baseURL))
        try await Train.get(id: id, in: other).delete()
    }

    @Test("a Rails index with no pager: get(), getAll() and an unpaged query's refresh prune a train deleted elsewhere")
    func bareIndexPrunes() async throws {
        var server = ReferenceServer.Configuration()
        server.indexPaging = .bare
        try await withHarness(server: server, configure: Self.pruning) { api in
            let store = api.store
            // get()
            let second = try await Train.get(id: 2, in: store)
            _ = try await Train.get(policy: .networkFirst, in: store)
            try await Self.deleteOnServer(api, id: 2)
            let listed = try await Train.get(in: store)
            #expect(listed.map(\.id) == [1])
            #expect(second.isDeleted, "pruned by get(): its next page repeated the list")
            let error = await #expect(throws: APIError.self) {
                try await Train.get(id: 2, policy: .cacheOnly, in: store)
            }
            #expect(error?.code == .notCached)

            // getAll()
            let made = Train()
            made.company = "Made"
            try await made.create(in: store)
            let id = try #require(made.id)
            try await Self.deleteOnServer(api, id: Int(id.description) ?? 0)
            #expect(try await Train.getAll(in: store).map(\.id) == [1])
            #expect(made.isDeleted, "pruned by getAll()")

            // An unpaged query.
            let query = try await Train.query(in: store)
            let again = Train()
            again.company = "Again"
            try await again.create(in: store)
            let againID = try #require(again.id)
            #expect(query.instances.contains { $0 === again })
            try await Self.deleteOnServer(api, id: Int(againID.description) ?? 0)
            try await query.refresh()
            #expect(query.instances.map(\.id) == [1])
            #expect(again.isDeleted, "pruned by the query's refresh")
            #expect(!query.hasNextPage)
        }
    }

    @Test(
        "an empty answer is the whole list on any server: the last trains deleted elsewhere go from memory and the file",
        arguments: [IndexPaging.bare, .silentCap(3), .headers], ["get()", "getAll()", "query"])
    func emptyListIsWhole(paging: IndexPaging, read: String) async throws {
        var server = ReferenceServer.Configuration()
        server.indexPaging = paging
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withHarness(server: server, configure: Self.pruning) { api in
                let store = ResourceStore(
                    configuration: api.store.configuration, storage: try SQLiteStorage(path: path))
                let first = try await Train.get(id: 1, policy: .networkFirst, in: store)
                let query = try await Train.query(in: store)
                #expect(query.instances.count == 2)
                try await Self.deleteOnServer(api, id: 1)
                try await Self.deleteOnServer(api, id: 2)
                switch read {
                case "get()": #expect(try await Train.get(in: store).isEmpty)
                case "getAll()": #expect(try await Train.getAll(in: store).isEmpty)
                default:
                    try await query.refresh()
                    #expect(query.instances.isEmpty)
                }
                #expect(first.isDeleted, "pruned by \(read)")
                try await store.configuration.storage?.flush()
                let next = ResourceStore(configuration: api.store.configuration, storage: try SQLiteStorage(path: path))
                let error = await #expect(throws: APIError.self) {
                    try await Train.get(id: 1, policy: .cacheOnly, in: next)
                }
                #expect(error?.code == .notCached, "forgotten in the file")
            }
        }
    }

    @Test(
        "a has-many load walks as getAll() does: every car of the train, however the server pages",
        arguments: [IndexPaging.bare, .silentCap(3), .headers])
    func hasManyReadsEveryPage(paging: IndexPaging) async throws {
        var server = ReferenceServer.Configuration()
        server.indexPaging = paging
        server.defaultPageSize = 3
        try await withHarness(server: server) { api in
            let cars = try #require(ServerSchema.trains.resources.first { $0.name == "car" })
            for occupancy in 10..<17 {
                _ = try api.server.store.create(cars, attributes: ["occupancy": .int(Int64(occupancy)), "train_id": 1])
            }
            let onServer = try api.server.store.list(cars, filters: ["train_id": "1"]).total
            #expect(onServer > 3)
            let train = try await Seed.Train.get(id: 1, in: api.store)
            try await train.$cars.load()
            #expect(train.cars.count == onServer)
            #expect(Set(train.cars.compactMap(\.id)).count == onServer, "each car once")
        }
    }

    @Test("a server capping pages at 50 without a word: nothing is pruned; getAll() reads every page")
    func silentCapPrunesNothing() async throws {
        var server = ReferenceServer.Configuration()
        server.indexPaging = .silentCap(50)
        try await withHarness(server: server, configure: Self.pruning) { api in
            try Self.seed(api, count: 123)
            let store = api.store
            let all = try await Train.getAll(in: store)
            #expect(all.count == 123)
            // A page of 100 asked for, 50 given: a short page is no end.
            let query = try await Train.query(pageSize: 100, in: store)
            #expect(query.instances.count == 50)
            #expect(query.hasNextPage)
            let listed = try await Train.get(in: store)
            #expect(listed.count == 50)
            #expect(all.allSatisfy { !$0.isDeleted }, "nothing pruned by a capped page")
            let last = try await Train.get(id: 123, policy: .cacheOnly, in: store)
            #expect(last.id == 123, "still in the record cache")
            try await query.loadNextPage()
            try await query.loadNextPage()
            #expect(query.instances.count == 123)
        }
    }

    @Test("a delete on page 1 between two page requests: the walk returns what it read and prunes nothing")
    func deleteBetweenPages() async throws {
        var server = ReferenceServer.Configuration()
        server.indexPaging = .silentCap(25)
        let transport = FaultTransport.underTest()
        try await withHarness(server: server) {
            Self.pruning(&$0)
            $0.transport = transport
        } _: { api in
            try Self.seed(api, count: 40)
            let store = api.store
            let twentySix = try await Train.get(id: 26, in: store)
            // Between page 1 and page 2, another client deletes train 3: train 26 moves onto page 1.
            transport.beforeSending("GET /trains?page=2") { try await Self.deleteOnServer(api, id: 3) }
            let answer = try await Train.getAll(in: store)
            #expect(try api.server.store.find("trains", id: "3") == nil, "deleted between the pages")
            #expect(!answer.contains { $0 === twentySix }, "train 26 shifted onto a page already read")
            #expect(!twentySix.isDeleted, "not pruned: the server still has it")
            let cached = try await Train.get(id: 26, policy: .cacheOnly, in: store)
            #expect(cached === twentySix)
        }
    }

    @Test("the same with the server's total and links: a total that changed during the walk proves nothing")
    func deleteBetweenLinkedPages() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness(server: .init(defaultPageSize: 25)) {
            Self.pruning(&$0)
            $0.transport = transport
        } _: { api in
            try Self.seed(api, count: 40)
            let store = api.store
            let twentySix = try await Train.get(id: 26, in: store)
            transport.beforeSending("GET /trains?page=2&per_page=25") { try await Self.deleteOnServer(api, id: 3) }
            _ = try await Train.getAll(in: store)
            #expect(try api.server.store.find("trains", id: "3") == nil, "deleted between the pages")
            #expect(!twentySix.isDeleted, "not pruned: the server still has it")
        }
    }
}
