import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// Every cache policy against the reference server while it is up (and has changed the record
/// since it was cached), answering 304 (unchanged), down (stopped) and slow (its latency fault,
/// past the client's timeout): the value, where it came from, its age, and the requests the
/// server's journal saw — for a record by id and for a list.
@Suite("Cache policies × network conditions, against the reference server", .timeLimit(.minutes(5)))
struct CachePolicyTests {
    enum Shape: String, CaseIterable, Sendable {
        case record, list
    }

    enum Condition: String, Sendable {
        case up, notModified, down, slow
    }

    static let policies: [CachePolicy] = [
        .networkOnly, .networkFirst, .cacheFirst, .cacheFirst(maxAge: .zero), .cacheOnly, .staleWhileRevalidate,
    ]

    /// What a policy should do under a condition.
    struct Expected {
        /// The source of the answer, or `nil` when it throws `error`.
        var source: ResponseSource?
        var error: APIError.Code?
        /// Whether the value is the server's current one rather than the cached one.
        var isCurrent: Bool
        /// Requests the server saw for the call (for stale-while-revalidate, once the background
        /// request is done).
        var requests: Int
        /// Whether the request carried the cached ETag.
        var conditional: Bool
        /// For stale-while-revalidate: what awaiting the background request gives.
        var revalidation: Revalidation = .none

        enum Revalidation {
            case none, updates, confirms
            case fails(APIError.Code)
        }
    }

    static func expected(_ policy: CachePolicy, _ condition: Condition) -> Expected {
        let cached = Expected(source: .cache, isCurrent: false, requests: 0, conditional: false)
        switch (policy, condition) {
        case (.cacheOnly, _), (.cacheFirst, _):
            return cached
        case (.networkOnly, .up), (.networkOnly, .notModified):
            return Expected(source: .network, isCurrent: true, requests: 1, conditional: false)
        case (.networkOnly, .down):
            return Expected(error: .cannotConnect, isCurrent: false, requests: 0, conditional: false)
        case (.networkOnly, .slow):
            return Expected(error: .timedOut, isCurrent: false, requests: 1, conditional: false)
        case (.networkFirst, .up), (.cacheFirst(maxAge: .zero), .up):
            return Expected(source: .network, isCurrent: true, requests: 1, conditional: true)
        case (.networkFirst, .notModified), (.cacheFirst(maxAge: .zero), .notModified):
            return Expected(source: .revalidated, isCurrent: true, requests: 1, conditional: true)
        case (.networkFirst, .down):
            return cached
        case (.networkFirst, .slow):
            return Expected(source: .cache, isCurrent: false, requests: 1, conditional: true)
        case (.cacheFirst(maxAge: .zero), .down):
            return Expected(error: .cannotConnect, isCurrent: false, requests: 0, conditional: false)
        case (.cacheFirst(maxAge: .zero), .slow):
            return Expected(error: .timedOut, isCurrent: false, requests: 1, conditional: true)
        case (.staleWhileRevalidate, .up):
            return Expected(source: .cache, isCurrent: false, requests: 1, conditional: true, revalidation: .updates)
        case (.staleWhileRevalidate, .notModified):
            return Expected(source: .cache, isCurrent: false, requests: 1, conditional: true, revalidation: .confirms)
        case (.staleWhileRevalidate, .down):
            return Expected(
                source: .cache, isCurrent: false, requests: 0, conditional: false, revalidation: .fails(.cannotConnect))
        case (.staleWhileRevalidate, .slow):
            return Expected(
                source: .cache, isCurrent: false, requests: 1, conditional: true, revalidation: .fails(.timedOut))
        default:
            Issue.record("no expectation for \(policy) when \(condition)")
            return cached
        }
    }

    /// Reads the train by id or as the list, and gives the instance, its company as the call
    /// returned (before a background request can change it), and the answer's metadata.
    static func read(_ shape: Shape, id: ResourceID, policy: CachePolicy, in store: ResourceStore) async throws
        -> (train: Train, company: String?, answer: ResourceResponse<Void>)
    {
        switch shape {
        case .record:
            let answer = try await Train.response(id: id, policy: policy, in: store)
            return (answer.value, answer.value.company, answer.map { _ in })
        case .list:
            let answer = try await Train.response(policy: policy, in: store)
            let train = try #require(answer.value.first { $0.id == id })
            return (train, train.company, answer.map { _ in })
        }
    }

    /// One policy under one condition, on a cache warmed by a network read of `cachedCompany`.
    static func check(
        _ policy: CachePolicy, _ shape: Shape, _ condition: Condition, id: ResourceID, cache: InMemoryRecordCache,
        warmedAt: Date, cachedCompany: String, currentCompany: String, journal: RequestJournal,
        configuration: MonoRail.Configuration
    ) async throws {
        let expected = expected(policy, condition)
        let label = "\(policy) × \(condition) × \(shape)"
        var configuration = configuration
        configuration.storage = cache
        // A store of its own: its identity map is empty, so the value comes from the answer alone.
        let store = ResourceStore(configuration: configuration)
        let before = journal.count
        let result: (train: Train, company: String?, answer: ResourceResponse<Void>)
        do {
            result = try await read(shape, id: id, policy: policy, in: store)
        } catch let error as APIError {
            #expect(error.code == expected.error, "\(label): \(error)")
            #expect(journal.count - before == expected.requests, "\(label)")
            if expected.requests > 0 {
                #expect((journal.requests.last?.ifNoneMatch != nil) == expected.conditional, "\(label)")
            }
            return
        }
        let (train, company, answer) = result
        #expect(expected.error == nil, "\(label): answered from \(answer.source)")
        #expect(answer.source == expected.source, "\(label)")
        #expect(company == (expected.isCurrent ? currentCompany : cachedCompany), "\(label)")
        if case .none = expected.revalidation {
            #expect(journal.count - before == expected.requests, "\(label)")
            if expected.requests > 0 {
                #expect((journal.requests.last?.ifNoneMatch != nil) == expected.conditional, "\(label)")
            }
        }
        let age = try #require(answer.age, "\(label)")
        let fetchedAt = try #require(answer.fetchedAt, "\(label)")
        if answer.source == .cache {
            #expect(fetchedAt == warmedAt, "\(label)")
            #expect(age > .zero && age < .seconds(600), "\(label): \(age)")
        } else {
            #expect(fetchedAt > warmedAt, "\(label)")
            #expect(age == .zero, "\(label)")
        }
        #expect(train.fetchedAt == fetchedAt, "\(label)")
        switch expected.revalidation {
        case .none:
            #expect(answer.revalidation == nil, "\(label)")
        case .updates, .confirms:
            let revalidation = try #require(answer.revalidation, "\(label)")
            try await revalidation.value
            // The same instance, now the server's.
            #expect(train.company == currentCompany, "\(label)")
            #expect(journal.count - before == expected.requests, "\(label)")
            #expect((journal.requests.last?.ifNoneMatch != nil) == expected.conditional, "\(label)")
            #expect(try #require(train.fetchedAt, "\(label)") > warmedAt, "\(label)")
            // The cache now has the confirmed record, younger than the first copy.
            let again = try await read(shape, id: id, policy: .cacheOnly, in: store)
            #expect(try #require(again.answer.fetchedAt) > warmedAt, "\(label)")
        case .fails(let code):
            let revalidation = try #require(answer.revalidation, "\(label)")
            do {
                try await revalidation.value
                Issue.record("\(label): the revalidation succeeded")
            } catch let error as APIError {
                #expect(error.code == code, "\(label): \(error)")
            }
            #expect(train.company == cachedCompany, "\(label)")
            #expect(journal.count - before == expected.requests, "\(label)")
        }
    }

    /// Waits until a request to the stopped server is refused. Until the client has seen the
    /// server close them, its idle pooled connections still look open, and a request sent on one
    /// fails as `connectionClosed` rather than `cannotConnect`: "down" here means nothing listens.
    static func waitUntilRefused(id: ResourceID, configuration: MonoRail.Configuration) async throws {
        for _ in 0..<50 {
            do {
                _ = try await Train.get(id: id, policy: .networkOnly, in: ResourceStore(configuration: configuration))
                Issue.record("the stopped server answered")
                return
            } catch let error as APIError where error.code == .connectionClosed {
                continue
            } catch let error as APIError {
                #expect(error.code == .cannotConnect, "\(error)")
                return
            }
        }
        Issue.record("requests to the stopped server kept finding open connections")
    }

    /// Creates the train, and warms a new cache with it through a store of its own.
    static func warm(_ shape: Shape, id: ResourceID, configuration: MonoRail.Configuration) async throws
        -> (cache: InMemoryRecordCache, warmedAt: Date)
    {
        let cache = InMemoryRecordCache()
        var configuration = configuration
        configuration.storage = cache
        configuration.timeout = nil
        let (_, _, answer) = try await read(
            shape, id: id, policy: .networkOnly, in: ResourceStore(configuration: configuration))
        return (cache, try #require(answer.fetchedAt))
    }

    static func makeTrain(_ company: String, in store: ResourceStore) async throws -> ResourceID {
        let train = Train()
        train.company = company
        try await train.create(in: store)
        return try #require(train.id)
    }

    @Test("up, and the record changed since it was cached", arguments: Shape.allCases)
    func up(_ shape: Shape) async throws {
        // 200 ms away, so that stale-while-revalidate's background answer cannot overtake the
        // cached value it returns first.
        try await withHarness(server: .init(faults: FaultInjection(latency: .milliseconds(200)))) { harness in
            let id = try await Self.makeTrain("v0", in: harness.store)
            let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
            for (index, policy) in Self.policies.enumerated() {
                let cachedCompany = "v\(index)"
                _ = try harness.server.store.update(
                    trains, id: id.description, attributes: ["company": .string(cachedCompany)])
                let (cache, warmedAt) = try await Self.warm(shape, id: id, configuration: harness.store.configuration)
                let currentCompany = "v\(index) changed"
                _ = try harness.server.store.update(
                    trains, id: id.description, attributes: ["company": .string(currentCompany)])
                try await Self.check(
                    policy, shape, .up, id: id, cache: cache, warmedAt: warmedAt, cachedCompany: cachedCompany,
                    currentCompany: currentCompany, journal: harness.journal,
                    configuration: harness.store.configuration)
            }
        }
    }

    @Test("answering 304: the record did not change", arguments: Shape.allCases)
    func notModified(_ shape: Shape) async throws {
        try await withHarness { harness in
            let id = try await Self.makeTrain("Unchanged", in: harness.store)
            for policy in Self.policies {
                let (cache, warmedAt) = try await Self.warm(shape, id: id, configuration: harness.store.configuration)
                try await Self.check(
                    policy, shape, .notModified, id: id, cache: cache, warmedAt: warmedAt, cachedCompany: "Unchanged",
                    currentCompany: "Unchanged", journal: harness.journal, configuration: harness.store.configuration)
            }
        }
    }

    @Test("down: the server stopped", arguments: Shape.allCases)
    func down(_ shape: Shape) async throws {
        try await withHarness { harness in
            let id = try await Self.makeTrain("Offline", in: harness.store)
            let (cache, warmedAt) = try await Self.warm(shape, id: id, configuration: harness.store.configuration)
            await harness.server.stop()
            try await Self.waitUntilRefused(id: id, configuration: harness.store.configuration)
            for policy in Self.policies {
                try await Self.check(
                    policy, shape, .down, id: id, cache: cache, warmedAt: warmedAt, cachedCompany: "Offline",
                    currentCompany: "Offline", journal: harness.journal, configuration: harness.store.configuration)
            }
        }
    }

    @Test("slow: the server answers after the client's timeout", arguments: Shape.allCases)
    func slow(_ shape: Shape) async throws {
        try await withHarness(
            server: .init(faults: FaultInjection(latency: .milliseconds(1500))),
            configure: { $0.timeout = .milliseconds(300) },
            { harness in
                // Made and cached without the timeout; the latency applies to every request.
                var patient = harness.store.configuration
                patient.timeout = nil
                let id = try await Self.makeTrain("Slow", in: ResourceStore(configuration: patient))
                let (cache, warmedAt) = try await Self.warm(shape, id: id, configuration: harness.store.configuration)
                for policy in Self.policies {
                    try await Self.check(
                        policy, shape, .slow, id: id, cache: cache, warmedAt: warmedAt, cachedCompany: "Slow",
                        currentCompany: "Slow", journal: harness.journal, configuration: harness.store.configuration)
                }
            })
    }
}
