import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import TestServer
import Testing

/// Freshness and lifecycle: answers out of order, time to live, pins, unloading, damaged cached
/// records, and observers of a background revalidation.
@Suite("Record cache lifecycle: order, age, pins, unload", .timeLimit(.minutes(5)))
struct CacheLifecycleTests {
    @Test("an answer to an older request does not overwrite the newer one, in the instance or the cache")
    func outOfOrder() async throws {
        // The reference server answers the first read from the records as they were, and holds the
        // answer back while the record changes and a second read's answer overtakes it.
        let faults = FaultInjection(slowResponses: ["/trains/1?v=slow": .milliseconds(1500)])
        try await withHarness(server: .init(faults: faults)) { harness in
            let slow = Task { try await Train.get(id: 1, parameters: ["v": "slow"], in: harness.store) }
            while !harness.journal.entries.contains("GET /trains/1?v=slow") {
                try await Task.sleep(for: .milliseconds(5))
            }
            // The slow answer is made as the request arrives (a read of one row, well under this);
            // then the record changes on the server.
            try await Task.sleep(for: .milliseconds(300))
            let trains = try #require(ServerSchema.trains.resources.first)
            _ = try harness.server.store.update(trains, id: "1", attributes: ["company": "Newer"])
            let train = try await Train.get(id: 1, parameters: ["v": "fast"], in: harness.store)
            #expect(train.company == "Newer")
            let fetchedAt = try #require(train.fetchedAt)
            let late = try await slow.value
            #expect(harness.journal.entries.suffix(2) == ["GET /trains/1?v=slow", "GET /trains/1?v=fast"])
            #expect(late === train)
            #expect(train.company == "Newer")
            #expect(train.fetchedAt == fetchedAt)
            let cached = try await Train.get(id: 1, policy: .cacheOnly, in: harness.store)
            #expect(cached.company == "Newer")
        }
    }

    @Test(
        "an answer to an older request merged once the newer state's instance is gone: the instance made again shows the newer state",
        arguments: ["read", "save", "push"])
    func outOfOrderReleased(newer: String) async throws {
        let transport = FaultTransport.underTest()
        try await Self.withTransport(transport, pushes: newer == "push") { api in
            // The list is answered from the records as they are, and its answer held back while the
            // store hears of a newer state of train 1, in an instance nothing keeps.
            transport.holdAnswers(to: "GET /trains", for: .milliseconds(1500))
            let listing = Task { try await Train.get(in: api.store) }
            #expect(try await eventually { api.journal.entries.contains("GET /trains") })
            let trains = try #require(ServerSchema.trains.resources.first)
            switch newer {
            case "save":
                try await Self.rename(1, to: "Newer", in: api.store)
            case "read":
                _ = try api.server.store.update(trains, id: "1", attributes: ["company": "Newer"])
                #expect(try await Train.get(id: 1, in: api.store).company == "Newer")
            default:
                _ = try api.server.store.update(trains, id: "1", attributes: ["company": "Newer"])
                // The push's instance is released once merged; the record cache keeps its state.
                var pushed = false
                for _ in 0..<1000 where !pushed {
                    pushed = (try? await Train.get(id: 1, policy: .cacheOnly, in: api.store))?.company == "Newer"
                    if !pushed { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(pushed)
            }
            #expect(api.store.instance(of: Train.self, id: 1) == nil, "nothing holds the newer state's instance")
            let listed = try #require(try await listing.value.first { $0.id == 1 })
            #expect(listed.company == "Newer", "the list's answer is older than what the store heard")
            #expect(try await Train.get(id: 1, policy: .cacheOnly, in: api.store).company == "Newer")
        }
    }

    @Test(
        "answers to older requests that still hold a record deleted since (a push, the app's delete): the record does not come back",
        arguments: ["push", "delete"])
    func outOfOrderDeleted(by deletion: String) async throws {
        let transport = FaultTransport.underTest()
        try await Self.withTransport(transport, pushes: deletion == "push") { api in
            let doomed = try await Train.get(id: 1, in: api.store)
            // A list, a read of train 1 and a fetch of its instance, answered as the record still is
            // and held back while it is deleted and the store hears so.
            transport.holdAnswers(to: "GET /trains", for: .milliseconds(1500))
            transport.holdAnswers(to: "GET /trains/1", for: .milliseconds(1500))
            let asked = api.journal.count
            let listing = Task { try await Train.get(in: api.store) }
            let reading = Task { try await Train.get(id: 1, in: api.store) }
            let fetching = Task { try await doomed.fetch() }
            // The read and the fetch of one record may share one request.
            #expect(try await eventually { api.journal.count >= asked + 2 })
            try await Task.sleep(for: .milliseconds(100))
            if deletion == "push" {
                let trains = try #require(ServerSchema.trains.resources.first)
                _ = try api.server.store.delete(trains, id: "1")
                let deleted = try api.server.store.changeBounds().newest
                #expect(
                    try await eventually {
                        (api.store.liveUpdates.lastEventID.flatMap { Int64($0) } ?? 0) >= deleted
                    })
            } else {
                try await doomed.delete()
            }
            #expect(doomed.isDeleted)
            let listed = try await listing.value
            #expect(!listed.isEmpty && !listed.contains { $0.id == 1 }, "the list's answer is older than the deletion")
            let error = await #expect(throws: APIError.self) { try await reading.value }
            #expect(error?.code == .inconsistentResponse)
            #expect(error?.message.contains("deleted on the server after this request was sent") == true)
            await #expect(throws: APIError.self) { try await fetching.value }
            #expect(doomed.isDeleted)
            #expect(api.store.instance(of: Train.self, id: 1) == nil, "the fetched instance does not come back")
            // The record cache kept none of it either.
            let cached = try await Train.get(policy: .cacheOnly, in: api.store)
            #expect(cached.map(\.id) == listed.map(\.id))
            await #expect(throws: APIError.self) { try await Train.get(id: 1, policy: .cacheOnly, in: api.store) }
        }
    }

    /// The harness with its requests sent through `transport`, and with live updates from the
    /// server's change feed, connected and live, when `pushes`.
    private static func withTransport(
        _ transport: FaultTransport, pushes: Bool, _ body: (TestAPI) async throws -> Void
    ) async throws {
        try await withHarness {
            $0.transport = transport
            if pushes { $0.liveUpdates = .serverSentEvents(path: "/changes") }
        } _: { api in
            defer { api.store.liveUpdates.disconnect() }
            if pushes {
                try await api.store.liveUpdates.connect()
                #expect(try await eventually { api.store.liveUpdates.state.isLive })
            }
            try await body(api)
        }
    }

    /// Reads a train, renames it and saves it, keeping none of it.
    private static func rename(_ id: Int, to company: String, in store: ResourceStore) async throws {
        let train = try await Train.get(id: id, in: store)
        train.company = company
        try await train.save()
    }

    @Test("past the time to live a cached record answers nothing; within it, it answers")
    func timeToLive() async throws {
        try await withHarness { harness in
            let train = Train()
            train.company = "Short-lived"
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            #expect(try await Train.get(id: id, policy: .cacheOnly, in: harness.store) === train)
            harness.store.configure { $0.cacheTimeToLive = .seconds(3600) }
            #expect(try await Train.get(id: id, policy: .cacheOnly, in: harness.store) === train)
            harness.store.configure { $0.cacheTimeToLive = .zero }
            let error = await #expect(throws: APIError.self) {
                try await Train.get(id: id, policy: .cacheOnly, in: harness.store)
            }
            #expect(error?.code == .notCached)
            // cacheFirst goes to the network instead.
            let requests = harness.journal.count
            let answer = try await Train.response(id: id, policy: .cacheFirst, in: harness.store)
            #expect(answer.source == .network && answer.value === train)
            #expect(harness.journal.count == requests + 1)
        }
    }

    @Test("without storage, cacheOnly is notCached and the other policies ask the network")
    func noStorage() async throws {
        try await withHarness(
            configure: { $0.storage = nil },
            { harness in
                let train = try await Train.get(id: 1, in: harness.store)
                let error = await #expect(throws: APIError.self) {
                    try await Train.get(id: 1, policy: .cacheOnly, in: harness.store)
                }
                #expect(error?.code == .notCached)
                let requests = harness.journal.count
                #expect(try await Train.response(id: 1, policy: .cacheFirst, in: harness.store).source == .network)
                #expect(try await Train.get(id: 1, policy: .staleWhileRevalidate, in: harness.store) === train)
                #expect(harness.journal.count == requests + 2)
            })
    }

    @Test("a model's own policy and time to live apply to its reads")
    func perModel() async throws {
        try await withHarness { harness in
            let train = CachedFirstTrain()
            train.company = "Cache first"
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            let requests = harness.journal.count
            let answer = try await CachedFirstTrain.response(id: id, in: harness.store)
            #expect(answer.source == .cache)
            #expect(harness.journal.count == requests)
            // A call's policy wins over the model's.
            #expect(
                try await CachedFirstTrain.response(id: id, policy: .networkOnly, in: harness.store).source == .network)
        }
    }

    @Test("a pinned instance stays the store's when the app lets it go; unpinned, it is released")
    func pin() async throws {
        try await withHarness { harness in
            let id: ResourceID
            do {
                let train = Train()
                train.company = "Pinned"
                try await train.create(in: harness.store)
                id = try #require(train.id)
                try await harness.store.pin(train)
            }
            let pinned = try #require(harness.store.instance(of: Train.self, id: id))
            #expect(pinned.company == "Pinned")
            weak let released: Train? = pinned
            try await harness.store.unpin(pinned)
            #expect(released != nil)
            _ = consume pinned
            #expect(released == nil)
            #expect(harness.store.instance(of: Train.self, id: id) == nil)
        }
    }

    @Test("unload forgets one record locally, unloadAll every record of a model; the server keeps them")
    func unload() async throws {
        try await withHarness { harness in
            var trains: [Train] = []
            for company in ["A", "B"] {
                let train = Train()
                train.company = company
                try await train.create(in: harness.store)
                trains.append(train)
            }
            _ = try await Train.get(in: harness.store)
            let first = try #require(trains[0].id)
            try await harness.store.unload(trains[0])
            #expect(harness.store.instance(of: Train.self, id: first) == nil)
            await #expect(throws: APIError.self) {
                try await Train.get(id: first, policy: .cacheOnly, in: harness.store)
            }
            // The list named it: it cannot answer without it.
            await #expect(throws: APIError.self) { try await Train.get(policy: .cacheOnly, in: harness.store) }
            let again = try await Train.get(id: first, in: harness.store)
            #expect(again !== trains[0] && again.company == "A")

            try await harness.store.unloadAll(Train.self)
            #expect(harness.store.instances(of: Train.self).isEmpty)
            let second = try #require(trains[1].id)
            await #expect(throws: APIError.self) {
                try await Train.get(id: second, policy: .cacheOnly, in: harness.store)
            }
            #expect(try await Train.get(in: harness.store).count >= 2)
        }
    }

    @Test("a damaged cached record is dropped and fetched again; cacheOnly reports it")
    func damagedRecord() async throws {
        let cache = InMemoryRecordCache()
        try await withHarness(
            configure: { $0.storage = cache },
            { harness in
                let id: ResourceID
                do {
                    let train = Train()
                    train.company = "Sound"
                    try await train.create(in: harness.store)
                    id = try #require(train.id)
                }
                // No live instance answers now: the cache is read.
                #expect(harness.store.instance(of: Train.self, id: id) == nil)
                let key = RecordKey(model: "train", id: id)
                // Later in the order of requests than the copy the create left, so it replaces it.
                try await cache.write(
                    [StoredRecord(key: key, body: Data([0xc1, 0x00]), fetchedAt: Date(), order: 1 << 40)],
                    query: nil)
                let error = await #expect(throws: APIError.self) {
                    try await Train.get(id: id, policy: .cacheOnly, in: harness.store)
                }
                #expect(error?.code == .decodingFailed)
                let requests = harness.journal.count
                let answer = try await Train.response(id: id, policy: .cacheFirst, in: harness.store)
                #expect(answer.source == .network && answer.value.company == "Sound")
                #expect(harness.journal.count == requests + 1)
                // The damaged copy is gone; the network's answer replaced it.
                let stored = try await cache.records([key])[key]
                #expect(stored?.body != Data([0xc1, 0x00]))
            })
    }

    @Test("stale-while-revalidate: observers of the same instance see the server's answer arrive")
    func revalidationIsObserved() async throws {
        try await withHarness { harness in
            let train = Train()
            train.company = "Before"
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
            _ = try harness.server.store.update(trains, id: id.description, attributes: ["company": "After"])
            let changed = Locked(false)
            withObservationTracking {
                _ = train.company
            } onChange: {
                changed.withLock { $0 = true }
            }
            let answer = try await Train.response(id: id, policy: .staleWhileRevalidate, in: harness.store)
            #expect(answer.source == .cache && answer.value === train)
            try await #require(answer.revalidation).value
            #expect(train.company == "After")
            #expect(changed.withLock { $0 })
        }
    }
}

/// A model that reads its cache first, whatever the store says.
@Resource(name: "train")
final class CachedFirstTrain {
    var company: String?

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.cachePolicy = .cacheFirst
        configuration.cacheTimeToLive = .seconds(3600)
    }
}

@Suite("Conditional requests with Last-Modified", .timeLimit(.minutes(5)))
struct LastModifiedTests {
    @Test("a record's Last-Modified is kept and sent back as If-Modified-Since; the server's 304 keeps the copy")
    func ifModifiedSince() async throws {
        try await withHarness { harness in
            let id: ResourceID
            do {
                let train = Train()
                train.company = "Dated"
                try await train.create(in: harness.store)
                id = try #require(train.id)
                let first = try await Train.response(id: id, in: harness.store)
                #expect(first.headerFields[.lastModified] != nil)
            }
            // With the ETag gone from the copy, the date alone validates it.
            let cache = try #require(harness.store.configuration.storage)
            let key = RecordKey(model: "train", id: id)
            var stored = try #require(try await cache.records([key])[key])
            #expect(stored.lastModified != nil)
            stored.etag = nil
            try await cache.remove([key])
            try await cache.write([stored], query: nil)
            let answer = try await Train.response(id: id, policy: .networkFirst, in: harness.store)
            let request = try #require(harness.journal.requests.last)
            #expect(request.ifNoneMatch == nil)
            #expect(request.ifModifiedSince == stored.lastModified)
            #expect(answer.source == .revalidated && answer.value.company == "Dated")
        }
    }
}
