import Foundation
import MonoRailClient
import MonoRailTesting
import TestModels
import Testing

@testable import MonoRail

/// Eight tasks read, edit and merge the same instances at once. Run under the thread sanitizer too:
/// `swift test --sanitize=thread --filter ConcurrencyTests`.
@Suite("Concurrency", .timeLimit(.minutes(5)))
struct ConcurrencyTests {
    /// Merges server records into `store` the way a response does, without the network, so that
    /// thousands of merges race with readers and writers.
    func merge(_ records: [JSONValue], into store: ResourceStore) throws -> [Train] {
        let context = store.setup(for: Train.self)
        let coder = FieldCoder(options: context.coding)
        let decoder = context.decoder(coder: coder, store: store)
        let patches = try records.enumerated().map { index, record in
            try decoder.decode(record, at: RecordLocation(base: "$", index: index))
        }
        return try store.merge(patches, coder: coder, fetched: store.stamp())
    }

    @Test("merges are atomic per instance while 8 tasks read, edit and merge")
    func atomicMerges() async throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let trains = try merge((1...4).map { ["id": .int($0), "company": "c0", "number_of_cars": 0] }, into: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 1...300 {
                        switch worker % 4 {
                        case 0, 1:
                            // A merge writes company and number_of_cars together: "c<n>" with n cars.
                            let records: [JSONValue] = (1...4).map {
                                ["id": .int($0), "company": .string("c\(round)"), "number_of_cars": .int(Int64(round))]
                            }
                            let merged = try merge(records, into: store)
                            #expect(merged.count == 4)
                        case 2:
                            // Readers never see the two fields of one merge apart.
                            for train in trains {
                                let (company, cars) = train._$state.state.withLock {
                                    ($0.values.company, $0.values.numberOfCars)
                                }
                                #expect(company == "c\(cars ?? -1)")
                            }
                        default:
                            let train = trains[round % 4]
                            train.maxSpeed = Double(round)
                            _ = train.hasChanges
                            _ = train.changes
                            if round % 50 == 0 { train.revert() }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(store.count == 4)
        for train in trains { #expect(try merge([["id": train.id?.jsonValue ?? .null]], into: store) == [train]) }
    }

    @Test("concurrent get(id:) calls for one record all return the same instance")
    func concurrentGets() async throws {
        try await withHarness { harness in
            let instances = try await withThrowingTaskGroup(of: Train.self) { group in
                for _ in 0..<8 { group.addTask { try await Train.get(id: 2, in: harness.store) } }
                return try await group.reduce(into: [Train]()) { $0.append($1) }
            }
            #expect(Set(instances.map(ObjectIdentifier.init)).count == 1)
            #expect(harness.store.count == 1)
        }
    }
}

extension Train: Equatable {
    static func == (lhs: Train, rhs: Train) -> Bool { lhs === rhs }
}
