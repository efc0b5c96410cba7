import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// The example of the article "Live lists and paging", run against the reference server; a test
/// checks it still reads as in the article.
@Suite("README live lists")
struct ReadmeLiveTests {
    @Test("the example matches the README")
    func matchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeFormatTests.readmeBlocks()
        let region = source.components(separatedBy: "// README LIVE BEGIN\n")[1]
            .components(separatedBy: "// README LIVE END")[0]
        #expect(blocks.contains(ReadmeFormatTests.normalise(region)))
    }

    @Test("the example runs: a sorted page, a create that joins with no GET, an edit that leaves, cars in pages")
    func example() async throws {
        try await withHarness { harness in
            let store = harness.store
            let train = try await Seed.Train.get(id: 1, in: store)
            // README LIVE BEGIN
            let trains = try await Train.query(
                where: ["company": ["MonoRail Co.", "Deutsche Bahn AG"], "max_speed": .atLeast(40)],
                order: [.descending("max_speed")], pageSize: 25, in: store)
            print(trains.instances.map(\.id), trains.total ?? 0)  // [2, 1] 2: the first page, fastest first

            let fast = Train()
            fast.company = "MonoRail Co."
            fast.maxSpeed = 120
            try await fast.create(in: store)  // joins in its place: no GET
            print(trains.instances.map(\.maxSpeed))  // [300.0, 120.0, 46.8]
            fast.company = "Elsewhere"  // an edit that leaves the filter leaves the list, saved or not
            print(trains.instances.count)  // 2

            try await trains.loadNextPage()  // nothing more here; concurrent calls share one request
            let cars = try await train.$cars.query(pageSize: 20)  // a @Has(.many) in pages: GET /cars?train_id=1&…
            print(cars.instances.count)  // 2
            // README LIVE END
            #expect(trains.instances.map(\.id) == [2, 1])
            #expect(trains.total == 2)
            #expect(!trains.hasNextPage)
            #expect(cars.instances.count == 2)
            let gets = harness.journal.entries.filter { $0.hasPrefix("GET /trains") }
            #expect(gets.count == 2, "\(gets)")  // Seed.Train.get(id: 1) and the query's one page
        }
    }
}
