import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Live queries under concurrent change: run under the thread sanitizer in CI.
@Suite("Live queries: concurrency", .timeLimit(.minutes(5)))
struct LiveQueryConcurrencyTests {
    @Test("8 tasks edit, revert, create and refetch while 8 queries are iterated; each ends true")
    func eightByEight() async throws {
        try await withHarness { harness in
            let store = harness.store
            try LivePagingTests.addTrains(198, to: harness) { Double($0 % 50) }
            let trains = try await Train.get(in: store)
            #expect(trains.count == 200)
            let companies = (0..<8).map { "C\($0)" }
            for (index, train) in trains.enumerated() { train.company = companies[index % 8] }
            var queries: [ResourceQuery<Train>] = []
            for company in companies {
                queries.append(
                    try await Train.query(
                        where: ["company": .equals(.string(company))], order: [.ascending("max_speed")], in: store))
            }
            // Observers read every list they are given until the changes are over.
            let observers = queries.map { query in
                Task {
                    var seen = 0
                    for await records in query {
                        _ = records.map(\.maxSpeed)
                        seen += 1
                    }
                    return seen
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var generator = SplitMix(state: UInt64(worker + 1))
                        for step in 0..<150 {
                            let train = trains[Int.random(in: 0..<trains.count, using: &generator)]
                            switch Int.random(in: 0..<10, using: &generator) {
                            case 0: train.revert()
                            case 1 where worker < 2 && step % 30 == 0:
                                let made = Train()
                                made.company = companies[step % 8]
                                made.maxSpeed = Double(step)
                                try await made.create(in: store)
                            case 2 where worker >= 6 && step % 25 == 0:
                                _ = try await Train.get(in: store)
                            default:
                                train.company = companies[Int.random(in: 0..<8, using: &generator)]
                                train.maxSpeed = Double(Int.random(in: 0..<100, using: &generator))
                            }
                            if step % 10 == 0 { await Task.yield() }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for observer in observers { observer.cancel() }
            for observer in observers { #expect(await observer.value >= 1) }
            let live = store.instances(of: Train.self)
            for (company, query) in zip(companies, queries) {
                let records = query.instances
                let expected = Set(live.filter { $0.company == company && !$0.isDeleted }.map(ObjectIdentifier.init))
                #expect(Set(records.map(ObjectIdentifier.init)) == expected, "\(company)")
                #expect(records.count == expected.count, "\(company): each once")
                let speeds = records.map { $0.maxSpeed ?? -1 }
                #expect(speeds == speeds.sorted(), "\(company): in order")
            }
        }
    }
}
