import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// A cache that holds nothing and cannot keep anything, like a full disk.
private final class FullCache: RecordCache {
    struct Full: Error {}
    func records(_ keys: [RecordKey]) async throws -> [RecordKey: StoredRecord] { [:] }
    func query(_ key: QueryKey) async throws -> StoredQuery? { nil }
    func write(_ records: [StoredRecord], query: StoredQuery?) async throws { throw Full() }
    func refresh(_ keys: [RecordKey], query: QueryKey?, fetched: FetchStamp) async throws { throw Full() }
    func remove(_ keys: [RecordKey]) async throws { throw Full() }
    func forgetDeleted(_ keys: [RecordKey]) async throws { throw Full() }
    func removeAll(model: String) async throws { throw Full() }
    func forgetAbsent(model: String, keeping ids: Set<String>, fetchedBefore order: Int64) async throws -> [RecordKey] {
        throw Full()
    }
    func setPinned(_ pinned: Bool, _ keys: [RecordKey]) async throws { throw Full() }
    func clear() async throws { throw Full() }
}

@Suite("The action pipeline: response metadata, include, and the cache and outbox stages", .timeLimit(.minutes(5)))
struct ActionPipelineTests {
    @Test("a response carries the status, header fields, ETag, Date and source of the answer")
    func metadata() async throws {
        try await withHarness { harness in
            let train = Train()
            train.company = "MonoRail Co."
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            let answer = try await Train.response(id: id, in: harness.store)
            #expect(answer.value === train)
            #expect(answer.status == .ok)
            #expect(answer.source == .network)
            #expect(answer.headerFields[.contentType]?.hasPrefix("application/json") == true)
            let etag = try #require(answer.etag)
            #expect(etag.hasPrefix("\"") && etag.count > 2)
            #expect(
                answer.date.map { abs($0.timeIntervalSinceNow) < 300 } == true, "\(String(describing: answer.date))")
        }
    }

    @Test("a paged list reads its Link relations and total from the response")
    func links() async throws {
        try await withHarness { harness in
            for index in 0..<5 {
                let train = Train()
                train.company = "Company \(index)"
                try await train.create(in: harness.store)
            }
            let all = try await Train.get(in: harness.store)
            let page = try await Train.response(where: ["page": 2, "per_page": 2], in: harness.store)
            #expect(page.value.map(\.id) == all[2..<4].map(\.id))
            let next = try #require(page.links["next"])
            let components = URLComponents(url: next, resolvingAgainstBaseURL: false)
            #expect(components?.queryItems?.first { $0.name == "page" }?.value == "3")
            #expect(next.host == "127.0.0.1")
            #expect(page.links["prev"] != nil && page.links["first"] != nil && page.links["last"] != nil)
            #expect(page.headerFields[HTTPField.Name("X-Total-Count") ?? .accept] == String(all.count))
        }
    }

    @Test("include: side-loads related records with ?include=, and they merge with the record")
    func include() async throws {
        try await withHarness { harness in
            let train = Seed.Train()
            train.company = "MonoRail Co."
            try await train.create(in: harness.store)
            let trainID = try #require(train.id?.intValue)
            for occupancy in [10, 20] {
                let car = Seed.Car()
                car.occupancy = occupancy
                car.train = train
                try await car.create(in: harness.store)
            }
            let other = ResourceStore(configuration: harness.store.configuration)
            harness.journal.reset()
            let fetched = try await Seed.Train.get(id: trainID, include: ["cars"], parameters: ["v": 2], in: other)
            let line = try #require(harness.journal.entries.last)
            #expect(line.contains("include=cars") && line.contains("v=2"), "\(line)")
            #expect(other.instances(of: Seed.Car.self).count == 2)
            #expect(fetched.cars.compactMap(\.occupancy).sorted() == [10, 20])
            #expect(harness.journal.count == 1)
        }
    }

    @Test("a record cache answers a read without a request, with the same live instance, and a delete forgets it")
    func recordCache() async throws {
        let cache = InMemoryRecordCache()
        try await withHarness(
            configure: { $0.storage = cache },
            { harness in
                let train = Train()
                train.company = "Cached"
                #expect(cache.count == 0)
                try await train.create(in: harness.store)
                let id = try #require(train.id)
                // The answer to the create is the record as the server has it.
                #expect(cache.count == 1)
                let requests = harness.journal.count
                let cached = try await Train.response(id: id, policy: .cacheFirst, in: harness.store)
                #expect(cached.source == .cache)
                #expect(cached.value === train)
                #expect(cached.fetchedAt == train.fetchedAt)
                #expect(harness.journal.count == requests)
                let fetched = try await Train.response(id: id, in: harness.store)
                #expect(fetched.source == .network && fetched.value === train)
                #expect(harness.journal.count == requests + 1)
                try await train.delete()
                #expect(cache.count == 0)
                await #expect(throws: APIError.self) {
                    try await Train.get(id: id, policy: .cacheOnly, in: harness.store)
                }
            })
    }

    @Test("a cache that cannot keep an answer does not fail the action that got it")
    func failingCache() async throws {
        try await withHarness(
            configure: { $0.storage = FullCache() },
            { harness in
                let train = Train()
                train.company = "Kept anyway"
                try await train.create(in: harness.store)
                let id = try #require(train.id)
                let fetched = try await Train.get(id: id, in: harness.store)
                #expect(fetched === train && fetched.company == "Kept anyway")
            })
    }

    @Test("a record younger than maxAge answers; an older one is asked for again, with its ETag")
    func recordCacheAge() async throws {
        try await withHarness { harness in
            let train = Train()
            train.company = "Fresh"
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            _ = try await Train.get(id: id, in: harness.store)
            let young = try await Train.response(id: id, policy: .cacheFirst(maxAge: .seconds(600)), in: harness.store)
            #expect(young.source == .cache)
            let again = try await Train.response(id: id, policy: .cacheFirst(maxAge: .zero), in: harness.store)
            #expect(again.source == .revalidated)
            #expect(again.value === train)
            #expect(harness.journal.requests.last?.ifNoneMatch != nil)
        }
    }

    @Test("the write policy: direct writes are sent at once; queued ones are kept, shown, and sent on flush")
    func writePolicy() async throws {
        try await withHarness { harness in
            let train = Train()
            train.company = "Outbound"
            try await train.create(in: harness.store)
            #expect(harness.journal.entries.last == "POST /trains")
            #expect(harness.store.outbox.pendingCount == 0)
        }
        try await withHarness(
            configure: {
                $0.writePolicy = .queued
                $0.allowsQueuedWritesLostOnQuit = true
            },
            { harness in
                // Sent in the background as soon as it is kept; paused, the outbox keeps it until the
                // flush, however the tasks are scheduled.
                await harness.store.outbox.pause()
                let journalBefore = harness.journal.count
                let train = Train()
                train.company = "Kept"
                try await train.create(in: harness.store)
                #expect(harness.journal.count == journalBefore, "kept, not sent")
                #expect(train.id?.isLocal == true)
                #expect(train.hasPendingChanges && !train.hasChanges)
                #expect(harness.store.instance(of: Train.self, id: try #require(train.id)) === train)
                try await harness.store.outbox.flush()
                #expect(harness.journal.count == journalBefore + 1)
                #expect(train.id?.isLocal == false)
                #expect(!train.hasPendingChanges)
                #expect(harness.store.outbox.pendingCount == 0)
            })
    }
}
