import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestServer
import Testing

/// Writes the server refuses or keeps failing: parked with their dependents while every other
/// write goes on, kept parked across a restart, retried or discarded by the app.
@Suite("The outbox: parked writes", .timeLimit(.minutes(5)))
struct ParkedWriteTests {
    static func configuration(_ url: URL?, limits: OutboxLimits = OutboxLimits(maximumFailures: 2))
        -> MonoRail.Configuration
    {
        var configuration = MonoRail.Configuration.testing(url)
        configuration.writePolicy = .queued
        configuration.outboxLimits = limits
        configuration.models.register(QueuedTrain.self, QueuedCar.self)
        return configuration
    }

    /// Flushes until a write is parked; a write waiting after a failed answer makes `flush()` throw
    /// until its next attempt is due.
    static func flushUntilParked(_ outbox: Outbox, count: Int) async throws {
        for _ in 0..<100 where outbox.parked.count < count {
            try? await outbox.flush()
            if outbox.parked.count < count { try await Task.sleep(for: .milliseconds(100)) }
        }
    }

    @Test("a write the server always fails (500) parks after the limit with its dependents; 50 others land")
    func alwaysFailing() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("store.sqlite").path
            try await withHarness { harness in
                let store = ResourceStore(
                    configuration: Self.configuration(harness.server.baseURL), storage: try SQLiteStorage(path: path))
                let outbox = store.outbox
                outbox.isPaused = true
                let events = outbox.events
                let refused = try await QueuedTrain.get(id: 2, in: store)
                harness.server.refusals.refuse("PUT /trains/2", status: 500)
                refused.numberOfCars = 5
                try await refused.save()
                refused.company = "Later Rail"  // a later write of the same record: depends on it
                try await refused.save()
                var independent: [QueuedTrain] = []
                for index in 0..<50 {
                    let train = QueuedTrain()
                    train.company = "Independent \(index)"
                    try await train.create(in: store)
                    independent.append(train)
                }
                harness.server.journal.reset()
                try await Self.flushUntilParked(outbox, count: 2)

                let parked = outbox.parked
                #expect(parked.map(\.verb) == [.update, .update])
                #expect(parked.first?.parking?.statusCode == 500 && parked.first?.failures == 2)
                #expect(parked.last?.parking?.code == .dependencyRejected)
                #expect(outbox.pendingCount == 0)
                let sent = harness.server.journal.entries
                #expect(sent.filter { $0 == "PUT /trains/2" }.count == 2, "tried up to the limit, then parked")
                #expect(sent.filter { $0 == "POST /trains" }.count == 50, "the independent writes went on")
                #expect(independent.allSatisfy { $0.id?.isLocal == false && !$0.hasPendingChanges })
                #expect(refused.numberOfCars == 5 && refused.company == "Later Rail", "the app's values stay")
                #expect(refused.hasChanges && !refused.hasPendingChanges && refused.rejection?.statusCode == 500)
                var seen: [String] = []
                for await event in events {
                    seen.append(OutboxTests.name(event))
                    if seen.contains(where: { $0.hasPrefix("parked \(parked[1].sequence)") }) { break }
                }
                #expect(seen.contains("parked \(parked[0].sequence) httpStatus"))
                #expect(seen.contains("retrying \(parked[0].sequence)"))
                await outbox.pause()

                // A restart finds them parked, and shows them on the instance as they were.
                let restarted = ResourceStore(
                    configuration: Self.configuration(harness.server.baseURL), storage: try SQLiteStorage(path: path))
                try await restarted.outbox.load()
                #expect(restarted.outbox.parked == parked)
                #expect(restarted.outbox.pendingCount == 0)
                let again = try #require(restarted.instance(of: QueuedTrain.self, id: 2))
                #expect(again.numberOfCars == 5 && again.company == "Later Rail")
                #expect(again.hasChanges && again.rejection?.statusCode == 500)
                harness.server.journal.reset()
                try await restarted.outbox.flush()
                #expect(harness.server.journal.entries.isEmpty, "a parked write is not sent on its own")

                // Fixed on the server, retried: sent once each, in order.
                harness.server.refusals.lift("PUT /trains/2")
                try await restarted.outbox.retry(parked[0])
                try await restarted.outbox.flush()
                #expect(harness.server.journal.entries == ["PUT /trains/2", "PUT /trains/2"])
                #expect(restarted.outbox.parked.isEmpty && restarted.outbox.pendingCount == 0)
                let stored = try harness.server.store.find("trains", id: "2")
                #expect(stored?["number_of_cars"] == 5 && stored?["company"] == "Later Rail")
                #expect(again.rejection == nil && !again.hasChanges && !again.hasPendingChanges)
                #expect(try SQLiteStorage(path: path).pendingWrites().isEmpty)
            }
        }
    }

    @Test("a 400 parks at once: not tried again; discarding it rolls the instance back")
    func refusedAndDiscarded() async throws {
        let configure: (inout MonoRail.Configuration) -> Void = { configuration in
            configuration = Self.configuration(configuration.apiRootURL)
            configuration.allowsQueuedWritesLostOnQuit = true
        }
        try await withHarness(configure: configure) { harness in
            let outbox = harness.store.outbox
            outbox.isPaused = true
            let train = try await QueuedTrain.get(id: 1, in: harness.store)
            let other = try await QueuedTrain.get(id: 2, in: harness.store)
            harness.server.refusals.refuse("PUT /trains/1", status: 400)
            train.numberOfCars = 12
            try await train.save()
            other.numberOfCars = 3
            try await other.save()
            harness.server.journal.reset()
            try await outbox.flush()
            // Different records: side by side, in either order.
            #expect(harness.server.journal.entries.sorted() == ["PUT /trains/1", "PUT /trains/2"])
            let parked = try #require(outbox.parked.first)
            #expect(parked.parking?.statusCode == 400 && parked.failures == 0)
            #expect(train.numberOfCars == 12 && train.hasChanges && train.rejection?.statusCode == 400)
            try await outbox.discard(parked)
            #expect(outbox.parked.isEmpty && outbox.pendingCount == 0)
            #expect(train.numberOfCars == 5 && !train.hasChanges, "back at the server's state")
            #expect(train.rejection == nil)
            try await outbox.flush()
            #expect(harness.server.journal.entries.sorted() == ["PUT /trains/1", "PUT /trains/2"], "never sent again")
            #expect(try harness.server.store.find("trains", id: "2")?["number_of_cars"] == 3)
        }
    }

    @Test("a parked create saved again is sent as one create, then the writes parked with it")
    func parkedCreateSavedAgain() async throws {
        try await withHarness(configure: OutboxTests.queued) { harness in
            let outbox = harness.store.outbox
            outbox.isPaused = true
            let train = QueuedTrain()  // no company: 422
            train.numberOfCars = 2
            try await train.create(in: harness.store)
            let car = QueuedCar()
            car.train = train
            car.occupancy = 3
            try await car.create(in: harness.store)
            harness.server.journal.reset()
            try await outbox.flush()
            #expect(outbox.parked.map(\.verb) == [.create, .create])
            train.company = "Second Try"
            try await train.save()
            #expect(outbox.parked.isEmpty && outbox.pending.map(\.verb) == [.create, .create])
            try await outbox.flush()
            #expect(harness.server.journal.entries == ["POST /trains", "POST /trains", "POST /cars"])
            let trainID = try #require(train.id)
            #expect(!trainID.isLocal && train.rejection == nil && !train.hasChanges)
            let stored = try harness.server.store.find("trains", id: trainID.description)
            #expect(stored?["company"] == "Second Try" && stored?["number_of_cars"] == 2)
            let carID = try #require(car.id)
            #expect(try harness.server.store.find("cars", id: carID.description)?["train_id"] == trainID.jsonValue)
            #expect(car.train === train && car.rejection == nil)
        }
    }

    /// How a hostile answer to a kept create ends after three flushes.
    enum Ending: Sendable { case kept, parked, confirmed }

    static let hostileAnswers: [(String, [RawServer.Step], Ending)] = [
        (
            "a reset mid-body",
            [.send("HTTP/1.1 201 Created\r\nContent-Length: 100\r\n\r\n{\"tr"), .pause(milliseconds: 50), .reset], .kept
        ),
        ("a closed connection with no answer", [.close], .kept),
        (
            "an HTML 502",
            [.send("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: 6\r\n\r\n<html>"), .close],
            .parked
        ),
        ("a status line below 100", [.send("HTTP/1.1 042 Odd\r\nContent-Length: 0\r\n\r\n"), .close], .parked),
        ("a 500 cut short", [.send("HTTP/1.1 500 Oops\r\nContent-Length: 50\r\n\r\n{"), .close], .kept),
        (
            "a 201 whose JSON is broken",
            [
                .send(
                    "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"train\": {]"
                ), .close,
            ], .confirmed
        ),
    ]

    @Test(
        "hostile answers during replay: kept, parked or taken by the rules, never lost",
        arguments: hostileAnswers.indices)
    func hostileAnswer(_ index: Int) async throws {
        let (name, script, ending) = Self.hostileAnswers[index]
        let server = try await RawServer.start(script)
        defer { Task { await server.stop() } }
        var configuration = Self.configuration(server.baseURL)
        configuration.allowsQueuedWritesLostOnQuit = true
        let store = ResourceStore(configuration: configuration)
        store.outbox.isPaused = true
        let train = QueuedTrain()
        train.company = "Hostile Rail"
        try await train.create(in: store)
        for _ in 0..<3 {
            try? await store.outbox.flush()
            // A failed answer waits about a second before its next attempt.
            if ending == .parked, store.outbox.parked.isEmpty { try await Task.sleep(for: .milliseconds(1_100)) }
        }
        switch ending {
        case .kept:
            #expect(store.outbox.pendingCount == 1 && store.outbox.parked.isEmpty, "\(name)")
            #expect(store.outbox.pending.first?.attempts == 3, "\(name)")
            #expect(train.hasPendingChanges && train.company == "Hostile Rail", "\(name)")
        case .parked:
            #expect(store.outbox.pendingCount == 0 && store.outbox.parked.count == 1, "\(name)")
            #expect(store.outbox.parked.first?.failures == 2, "\(name)")
            #expect(train.hasChanges && train.rejection != nil && train.company == "Hostile Rail", "\(name)")
        case .confirmed:
            #expect(store.outbox.pendingCount == 0 && store.outbox.parked.isEmpty, "\(name)")
        }
    }

    @Test("a server that cannot be reached parks nothing, however many attempts")
    func unreachableParksNothing() async throws {
        var configuration = Self.configuration(URL(string: "http://127.0.0.1:1"))
        configuration.allowsQueuedWritesLostOnQuit = true
        let store = ResourceStore(configuration: configuration)
        store.outbox.isPaused = true
        let train = QueuedTrain()
        train.company = "Offline Rail"
        try await train.create(in: store)
        for _ in 0..<5 { await #expect(throws: APIError.self) { try await store.outbox.flush() } }
        #expect(store.outbox.parked.isEmpty && store.outbox.pendingCount == 1)
        #expect(store.outbox.pending.first?.attempts == 5 && store.outbox.pending.first?.failures == 0)
    }
}

/// A refusal looks the same to the app whether the write was sent at once or kept in the outbox.
@Suite("Refusals: direct and queued side by side", .timeLimit(.minutes(5)))
struct RefusalParityTests {
    enum Refusal: String, CaseIterable, Sendable {
        case validation = "422"
        case conflict = "409"
        case precondition = "412"
    }

    /// What the app sees of an instance after a refused save.
    struct Seen: Equatable {
        var company: String?
        var numberOfCars: Int?
        var hasChanges: Bool
        var hasPendingChanges: Bool
        var companyErrors: [String]
        var status: Int?
    }

    /// Edits train 1 so the server refuses the save with `refusal`, saves it under `policy`, and
    /// reports what the instance shows afterwards.
    func refusedSave(_ refusal: Refusal, policy: WritePolicy) async throws -> Seen {
        var seen: Seen?
        let configure: (inout MonoRail.Configuration) -> Void = { configuration in
            configuration.writePolicy = policy
            configuration.allowsQueuedWritesLostOnQuit = true
            configuration.conditionalWrites = refusal == .precondition
        }
        try await withHarness(configure: configure) { harness in
            let train = try await QueuedTrain.get(id: 1, in: harness.store)
            train.numberOfCars = 9
            switch refusal {
            case .validation:
                train.company = ""  // the server requires one
            case .conflict:
                train.company = "Mine"
                harness.server.refusals.refuse("PUT /trains/1", status: 409)
            case .precondition:
                train.company = "Mine"
                let trains = try #require(harness.server.store.schema.resource(plural: "trains"))
                _ = try harness.server.store.update(trains, id: "1", attributes: ["max_speed": 10])
            }
            var status: Int?
            do {
                try await train.save()
                try await harness.store.outbox.flush()
                status = train.rejection?.statusCode
                #expect(harness.store.outbox.parked.count == (policy == .direct ? 0 : 1))
            } catch let error as APIError {
                #expect(policy == .direct, "only a direct save throws the refusal")
                status = error.statusCode
            }
            seen = Seen(
                company: train.company, numberOfCars: train.numberOfCars, hasChanges: train.hasChanges,
                hasPendingChanges: train.hasPendingChanges, companyErrors: train.errors["company"], status: status)
        }
        return try #require(seen)
    }

    @Test("the edits stay unsaved, with the same errors and status", arguments: Refusal.allCases)
    func parity(_ refusal: Refusal) async throws {
        let direct = try await refusedSave(refusal, policy: .direct)
        let queued = try await refusedSave(refusal, policy: .queued)
        #expect(direct == queued)
        #expect(direct.status == Int(refusal.rawValue))
        #expect(direct.numberOfCars == 9 && direct.hasChanges && !direct.hasPendingChanges)
        #expect(direct.companyErrors.isEmpty == (refusal != .validation))
    }
}
