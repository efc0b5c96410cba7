import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Paged live queries against the reference server: `Link` headers, page numbers, cursors, shared
/// page loads, and answers that arrive out of order.
@Suite("Live queries: paging", .timeLimit(.minutes(5)))
struct LivePagingTests {
    static func pageNumbersWorkedOut(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.paging.followsLinks = false
    }

    static func cursors(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.paging.style = .cursor(parameter: "after", size: "per_page", nextCursorKey: nil)
        // The reference server links numbered pages; this client pages by cursor.
        configuration.conventions.paging.followsLinks = false
    }

    /// Adds trains to the server directly, as another client would; returns their ids.
    @discardableResult
    static func addTrains(_ count: Int, to harness: TestAPI, speed: (Int) -> Double = { Double($0 % 300) }) throws
        -> [Int]
    {
        let store = harness.server.store
        let resource = try #require(store.schema.resource(plural: "trains"))
        return try (0..<count).map { index in
            let record = try store.create(
                resource,
                attributes: [
                    "company": .string("Bulk \(index)"), "max_speed": .double(speed(index)), "in_service": false,
                    "tags": [],
                ])
            return try #require(record["id"]?.intValue)
        }
    }

    /// Every train's id on the server, in its order.
    static func serverIDs(_ harness: TestAPI) throws -> [Int] {
        let store = harness.server.store
        let resource = try #require(store.schema.resource(plural: "trains"))
        return try store.list(resource, filters: [:]).records.compactMap { $0["id"]?.intValue }
    }

    /// Pages through every train while other clients add some between pages, and checks the query
    /// ends holding each record once, in the server's order, with the total up to date.
    func pageThrough(_ harness: TestAPI) async throws -> [String] {
        try Self.addTrains(998, to: harness)
        let trains = try await Train.query(pageSize: 100, in: harness.store)
        #expect(trains.instances.count == 100)
        #expect(trains.total == 1000)
        var page = 1
        while trains.hasNextPage {
            if page % 3 == 0 { try Self.addTrains(7, to: harness) }
            try await trains.loadNextPage()
            page += 1
            #expect(page < 40)
        }
        let ids = trains.instances.compactMap { $0.id?.description }
        let expected = try Self.serverIDs(harness).map(String.init)
        #expect(Set(ids).count == ids.count, "no duplicates")
        #expect(ids == expected, "no gaps")
        #expect(trains.total == expected.count)
        return harness.journal.entries.filter { $0.hasPrefix("GET /trains") }
    }

    @Test("1,000 records through Link headers, with records added between pages")
    func links() async throws {
        try await withHarness { harness in
            let requests = try await pageThrough(harness)
            #expect(requests.count == 11)
            #expect(requests.dropFirst().allSatisfy { $0.contains("page=") })
        }
    }

    @Test("1,000 records through page/per_page worked out here, links not followed")
    func pageNumbers() async throws {
        try await withHarness(configure: Self.pageNumbersWorkedOut) { harness in
            let requests = try await pageThrough(harness)
            #expect(requests.first == "GET /trains?page=1&per_page=100")
            #expect(requests.last == "GET /trains?page=11&per_page=100")
        }
    }

    @Test("1,000 records through a cursor: the id of each page's last record")
    func cursor() async throws {
        try await withHarness(configure: Self.cursors) { harness in
            let requests = try await pageThrough(harness)
            #expect(requests.first == "GET /trains?per_page=100")
            #expect(requests[1] == "GET /trains?after=100&per_page=100")
        }
    }

    @Test("concurrent loadNextPage() calls share one request")
    func sharedLoads() async throws {
        // Each answer takes 300 ms: the six calls start while the first one's request is out, even
        // on a machine busy enough to start the group's tasks late.
        try await withHarness(server: .init(faults: FaultInjection(latency: .milliseconds(300)))) { harness in
            try Self.addTrains(18, to: harness)
            let trains = try await Train.query(pageSize: 5, in: harness.store)
            harness.journal.reset()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 { group.addTask { try await trains.loadNextPage() } }
                try await group.waitForAll()
            }
            #expect(harness.journal.count == 1)
            #expect(trains.instances.count == 10)
            try await trains.loadNextPage()
            try await trains.loadNextPage()
            #expect(!trains.hasNextPage)
            #expect(trains.instances.count == 20)
            try await trains.loadNextPage()
            #expect(harness.journal.count == 3)
        }
    }

    @Test("a sorted paged query admits a joining record only within the pages loaded")
    func sortedJoins() async throws {
        try await withHarness { harness in
            try Self.addTrains(30, to: harness) { Double(100 + $0) }
            // Seeded: 46.8 and 300; added: 100…129.
            let trains = try await Train.query(order: [.ascending("max_speed")], pageSize: 10, in: harness.store)
            #expect(trains.instances.first?.id == 1)
            #expect(trains.instances.last?.maxSpeed == 108)
            #expect(harness.journal.entries.last?.contains("order=max_speed") == true)
            let slow = Train()
            slow.company = "Slow"
            slow.maxSpeed = 50
            try await slow.create(in: harness.store)
            let fast = Train()
            fast.company = "Fast"
            fast.maxSpeed = 250
            try await fast.create(in: harness.store)
            #expect(trains.instances.map(\.maxSpeed).prefix(3) == [46.8, 50, 100])
            #expect(!trains.instances.contains { $0 === fast })
            #expect(trains.total == 34)
            while trains.hasNextPage { try await trains.loadNextPage() }
            let speeds = trains.instances.compactMap(\.maxSpeed)
            #expect(speeds == speeds.sorted())
            #expect(trains.instances.count == 34)
            #expect(trains.instances.filter { $0 === fast }.count == 1)
        }
    }

    @Test("a refresh answered after a later one, and a page asked for before a refresh, are dropped")
    func staleAnswers() async throws {
        let canned = try await ScriptedServer.start()
        defer { Task { await canned.stop() } }
        let store = ResourceStore(configuration: .testing(canned.baseURL))
        let line = "GET /trains?company=A&page=1&per_page=2"
        canned.respond(
            to: line, body: #"{"trains": [{"id": 1, "company": "A"}, {"id": 2, "company": "A"}]}"#)
        let trains = try await Train.query(where: ["company": "A"], pageSize: 2, in: store)
        #expect(trains.instances.map(\.id) == [1, 2])

        // The older refresh is slow and lists record 3; the newer one answers at once without it.
        canned.respond(
            to: line, body: #"{"trains": [{"id": 1, "company": "A"}, {"id": 3, "company": "A"}]}"#,
            after: .milliseconds(400))
        let older = Task { try await trains.refresh() }
        try await Task.sleep(for: .milliseconds(100))
        canned.respond(to: line, body: #"{"trains": [{"id": 1, "company": "A"}, {"id": 2, "company": "A"}]}"#)
        try await trains.refresh()
        try await older.value
        #expect(trains.instances.map(\.id) == [1, 2])

        // A page asked for before a refresh is not appended after it.
        canned.respond(
            to: "GET /trains?company=A&page=2&per_page=2", body: #"{"trains": [{"id": 4, "company": "A"}]}"#,
            after: .milliseconds(400))
        let page = Task { try await trains.loadNextPage() }
        try await Task.sleep(for: .milliseconds(100))
        try await trains.refresh()
        try await page.value
        #expect(trains.instances.map(\.id) == [1, 2])
    }

    @Test("a @Has(.many) relationship in pages: train.$cars.query(pageSize:)")
    func hasManyPages() async throws {
        try await withHarness { harness in
            let server = harness.server.store
            let cars = try #require(server.schema.resource(plural: "cars"))
            for occupancy in 0..<23 {
                _ = try server.create(
                    cars,
                    attributes: ["occupancy": .int(Int64(100 - occupancy)), "needs_repairs": false, "train_id": 1])
            }
            let train = try await Seed.Train.get(id: 1, in: harness.store)
            let other = try await Seed.Train.get(id: 2, in: harness.store)
            let paged = try await train.$cars.query(order: [.ascending("occupancy")], pageSize: 10)
            #expect(harness.journal.entries.last == "GET /cars?order=occupancy&page=1&per_page=10&train_id=1")
            #expect(paged.instances.count == 10)
            #expect(paged.total == 25)
            while paged.hasNextPage { try await paged.loadNextPage() }
            let occupancies = paged.instances.compactMap(\.occupancy)
            #expect(occupancies == Array(occupancies.sorted()) && occupancies.count == 25)
            #expect(occupancies.first == 12)

            // A car moved to another train leaves; one moved here joins.
            let moved = try #require(paged.instances.first)
            moved.train = other
            try await moved.save()
            #expect(paged.instances.count == 24)
            #expect(paged.total == 24)
            let otherCars = try await other.$cars.query()
            let joining = try #require(otherCars.instances.first { $0 !== moved })
            joining.train = train
            #expect(paged.instances.contains { $0 === joining })
            #expect(!otherCars.instances.contains { $0 === joining })
        }
    }

    @Test("a server that ignores page parameters ends the list; one that cannot sort is sorted here")
    func unpagingServer() async throws {
        let canned = try await ScriptedServer.start()
        defer { Task { await canned.stop() } }
        var configuration = MonoRail.Configuration.testing(canned.baseURL)
        configuration.conventions.orderParameter = nil
        let store = ResourceStore(configuration: configuration)
        let two = #"{"trains": [{"id": 1, "max_speed": 10}, {"id": 2, "max_speed": 30}]}"#
        canned.respond(to: "GET /trains?page=1&per_page=2", body: two)
        canned.respond(to: "GET /trains?page=2&per_page=2", body: two)
        let repeated = try await Train.query(order: [.descending("max_speed")], pageSize: 2, in: store)
        #expect(repeated.instances.map(\.id) == [2, 1])
        #expect(repeated.hasNextPage)
        try await repeated.loadNextPage()
        #expect(repeated.instances.map(\.id) == [2, 1])
        #expect(!repeated.hasNextPage)

        let three = #"{"trains": [{"id": 3, "max_speed": 5}, {"id": 4, "max_speed": 50}, {"id": 5, "max_speed": 20}]}"#
        canned.respond(to: "GET /trains?company=X&page=1&per_page=2", body: three)
        let all = try await Train.query(
            where: ["company": "X"], order: [.ascending("max_speed")], pageSize: 2, in: store)
        #expect(all.instances.map(\.id) == [3, 5, 4])
        #expect(!all.hasNextPage)
    }

    @Test("a record that joins while a refresh is in flight stays when the older answer arrives")
    func joinDuringRefresh() async throws {
        let canned = try await ScriptedServer.start()
        defer { Task { await canned.stop() } }
        let store = ResourceStore(configuration: .testing(canned.baseURL))
        let line = "GET /trains?company=A"
        canned.respond(to: line, body: #"{"trains": [{"id": 1, "company": "A"}]}"#)
        let trains = try await Train.query(where: ["company": "A"], in: store)
        canned.respond(to: line, body: #"{"trains": [{"id": 1, "company": "A"}]}"#, after: .milliseconds(400))
        canned.respond(to: "POST /trains", status: 201, body: #"{"train": {"id": 2, "company": "A"}}"#)
        let refresh = Task { try await trains.refresh() }
        try await Task.sleep(for: .milliseconds(100))
        let made = Train()
        made.company = "A"
        try await made.create(in: store)
        #expect(trains.instances.map(\.id) == [1, 2])
        try await refresh.value
        #expect(trains.instances.map(\.id) == [1, 2])
    }
}
