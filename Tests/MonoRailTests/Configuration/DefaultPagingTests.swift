import Foundation
import Logging
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Lists from servers that page every index by default: a first page proves nothing about the
/// records it lacks; a walk through every page does.
@Suite("Servers that page by default", .timeLimit(.minutes(5)))
struct DefaultPagingTests {
    /// The reference server as Rails apps with Kaminari run: pages of 25 unless asked.
    static let paged = ReferenceServer.Configuration(defaultPageSize: 25)

    static func pruning(_ configuration: inout MonoRail.Configuration) { configuration.prunesOrphans = true }

    static func twoPagesAtMost(_ configuration: inout MonoRail.Configuration) {
        configuration.prunesOrphans = true
        configuration.conventions.paging.maximumPages = 2
    }

    /// 98 more trains on the server, 100 in all.
    static func fill(_ harness: TestAPI) throws {
        let store = harness.server.store
        let trains = try #require(store.schema.resource(plural: "trains"))
        for index in 0..<98 {
            _ = try store.create(
                trains, attributes: ["company": .string("Bulk \(index)"), "in_service": true, "tags": []])
        }
    }

    static func deleteOnServer(_ ids: [Int], _ harness: TestAPI) throws {
        let store = harness.server.store
        let trains = try #require(store.schema.resource(plural: "trains"))
        for id in ids { #expect(try store.delete(trains, id: String(id))) }
    }

    /// Whether a cache-only read of the train answers from the SQLite file.
    static func isCached(_ id: Int, in store: ResourceStore) async -> Bool {
        (try? await Train.get(id: id, policy: .cacheOnly, in: store)) != nil
    }

    @Test(
        "Train.get() on a paged server is one page: partial, prunes nothing in memory or SQLite; getAll() prunes exactly what the server deleted"
    )
    func referenceServer() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("paged.sqlite").path
            try await withHarness(server: Self.paged) { harness in
                try Self.fill(harness)
                var configuration = MonoRail.Configuration.testing(harness.server.baseURL)
                configuration.prunesOrphans = true
                let store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))

                let all = try await Train.getAll(in: store)
                #expect(all.count == 100)
                #expect(Set(all.compactMap { $0.id?.description }).count == 100)
                #expect(harness.journal.entries.count == 4)  // pages 1–4 of 25, each linked by the one before

                try Self.deleteOnServer([3, 50, 99], harness)
                let first = try await Train.response(in: store)
                #expect(first.value.count == 25)
                #expect(first.extent == .partial(total: 97))
                // Nothing past page 1 is taken for deleted: not the live instances, not the file.
                #expect(all.allSatisfy { !$0.isDeleted })
                for id in [3, 50, 99, 60] { #expect(await Self.isCached(id, in: store)) }

                let walked = try await Train.getAll(in: store)
                #expect(walked.count == 97)
                let gone = all.filter(\.isDeleted).compactMap { $0.id?.description }
                #expect(gone.sorted() == ["3", "50", "99"])
                for id in [3, 50, 99] { #expect(!(await Self.isCached(id, in: store))) }
                for id in [1, 49, 51, 100] { #expect(await Self.isCached(id, in: store)) }
            }
        }
    }

    @Test("a live query of a paged server pages on by the server's links and prunes only once every page is loaded")
    func query() async throws {
        try await withHarness(server: Self.paged, configure: Self.pruning) { harness in
            try Self.fill(harness)
            let store = harness.store
            let all = try await Train.getAll(in: store)
            try Self.deleteOnServer([80], harness)
            let trains = try await Train.query(in: store)
            #expect(trains.instances.count == 25)
            #expect(trains.hasNextPage)
            #expect(all.allSatisfy { !$0.isDeleted })
            for _ in 0..<2 { try await trains.loadNextPage() }
            #expect(trains.instances.count == 75)
            #expect(all.allSatisfy { !$0.isDeleted })
            try await trains.loadNextPage()
            #expect(!trains.hasNextPage)
            #expect(trains.instances.count == 99)
            #expect(all.filter(\.isDeleted).map(\.id) == [80])
        }
    }

    @Test("a first page passing for the list is said once, at notice level; a whole list says nothing")
    func partialNotice() async throws {
        try await withHarness(server: Self.paged) { harness in
            try Self.fill(harness)
            let log = LogCapture()
            harness.store.configure { $0.logger = log.logger(level: .notice) }
            for _ in 0..<3 { _ = try await Train.get(in: harness.store) }
            let notices = log.all.filter { $0.level == .notice }
            #expect(notices.count == 1)
            #expect(notices.first?.message.contains("GET /trains answered with one page of a longer list") == true)
            _ = try await Train.getAll(in: harness.store)
            #expect(log.all.filter { $0.level == .notice }.count == 1)
        }
    }

    @Test("a has-many load reads every page of the related records")
    func relationshipLoad() async throws {
        try await withHarness(schema: .trains, server: Self.paged) { harness in
            let server = harness.server.store
            let cars = try #require(server.schema.resource(plural: "cars"))
            for _ in 0..<60 { _ = try server.create(cars, attributes: ["train_id": 2, "occupancy": 1]) }
            let train = try await Seed.Train.get(id: 2, in: harness.store)
            try await train.$cars.load()
            #expect(train.cars.count == 61)
        }
    }

    @Test("a walk stops at paging.maximumPages with tooManyPages, pruning nothing")
    func pageLimit() async throws {
        try await withHarness(server: Self.paged, configure: Self.twoPagesAtMost) { harness in
            try Self.fill(harness)
            let held = try await Train.get(id: 100, in: harness.store)
            let error = try await #require(throws: APIError.self) { try await Train.getAll(in: harness.store) }
            #expect(error.code == .tooManyPages)
            #expect(harness.journal.entries.count == 3)
            #expect(!held.isDeleted)
        }
    }

    @Test("Django REST framework with PAGE_SIZE: get() prunes nothing; getAll() prunes exactly the deleted")
    func django() async throws {
        let server = try await PythonServer.django(extraTrains: 98, pageSize: 25)
        defer { server.stop() }
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .djangoREST
        configuration.prunesOrphans = true
        let store = ResourceStore(configuration: configuration)
        let all = try await Train.getAll(in: store)
        #expect(all.count == 100)
        // Deleted through the API by another client, as another user would.
        let other = ResourceStore(configuration: configuration)
        for id in [2, 40, 77] { try await Train.get(id: id, in: other).delete() }
        let first = try await Train.response(in: store)
        #expect(first.value.count == 25)
        #expect(first.extent == .partial(total: 97))
        #expect(all.allSatisfy { !$0.isDeleted })
        let walked = try await Train.getAll(in: store)
        #expect(walked.count == 97)
        #expect(all.filter(\.isDeleted).compactMap(\.id).map(\.description).sorted() == ["2", "40", "77"])
    }

    @Test("an unpaged answer with a total equal to what arrived is whole; a bare list says nothing")
    func extents() async throws {
        try await withHarness { harness in
            let answer = try await Train.response(in: harness.store)
            #expect(answer.extent == .whole)
        }
        let server = try await PythonServer.django()
        defer { server.stop() }
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .djangoREST
        let store = ResourceStore(configuration: configuration)
        let answer = try await Train.response(in: store)
        #expect(answer.value.count == 2)
        #expect(answer.extent == .unstated)
    }
}
