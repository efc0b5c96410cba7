import Foundation
import Logging
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import TestServer
import Testing

/// The store tells the app of changes — Observation, update streams, callbacks — where
/// `configuration.delivery` says.
@Suite("Delivery", .timeLimit(.minutes(5)))
struct DeliveryTests {
    /// Waits for a callback, which reports through `done`.
    static func callback(_ call: (@escaping @Sendable (Bool) -> Void) -> Void) async -> Bool {
        await withCheckedContinuation { continuation in
            call { value in continuation.resume(returning: value) }
        }
    }

    /// Counts the changes `read` sees, once each, and whether each was told on the main actor.
    ///
    /// `MainActor.assumeIsolated` stops the test process if the observer is told elsewhere: the
    /// main actor is not the main thread under every test runner, so no thread can be compared.
    final class MainActorWatch: Sendable {
        private let fired = Locked(0)

        init(_ read: @escaping @Sendable () -> Void) {
            watch(read)
        }

        private func watch(_ read: @escaping @Sendable () -> Void) {
            withObservationTracking(read) { [self] in
                MainActor.assumeIsolated { fired.withLock { $0 += 1 } }
            }
        }

        var count: Int { fired.withLock { $0 } }
    }

    @Test("the README's example runs as it reads")
    func readme() async throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let region = source.components(separatedBy: "// README DELIVERY BEGIN\n")[1]
            .components(separatedBy: "// README DELIVERY END")[0]
        #expect(try ReadmeFormatTests.readmeBlocks().contains(ReadmeFormatTests.normalise(region)))

        typealias Train = Seed.Train
        typealias Car = Seed.Car
        try await withHarness { harness in
            let store = harness.store
            let printed = Locked<[String]>([])
            @Sendable func print(_ line: String) { printed.withLock { $0.append(line) } }
            // README DELIVERY BEGIN
            store.configure { $0.delivery = .mainActor }  // MonoRail.configure for the default store
            let train = try await Train.get(id: 1, in: store)
            try await train.$cars.load()
            withObservationTracking {
                _ = train.cars
            } onChange: {
                MainActor.assumeIsolated { print("told on the main actor") }
            }
            let car = Car()
            car.train = train
            try await car.create(in: store)  // returns once the observers of what it changed were told
            // README DELIVERY END
            #expect(printed.withLock { $0 } == ["told on the main actor"])
        }
    }

    @Test("with .mainActor, success and failure run on the main actor")
    func callbacks() async throws {
        try await withHarness { harness in
            let store = harness.store
            store.configure { $0.delivery = .mainActor }
            let success = await Self.callback { done in
                Train.get(id: 1, in: store, success: { _ in done(MainActor.assumeIsolated { true }) })
            }
            let failure = await Self.callback { done in
                Train.get(
                    id: 404, in: store, success: { _ in done(false) },
                    failure: { _ in done(MainActor.assumeIsolated { true }) })
            }
            let train = try await Train.get(id: 1, in: store)
            let saved = await Self.callback { done in
                train.save(success: { _ in done(MainActor.assumeIsolated { true }) }, failure: { _ in done(false) })
            }
            #expect(success && failure && saved)
        }
    }

    @Test(
        "with .mainActor, a field, a relationship and a live query are told on the main actor before the action returns"
    )
    func observationOnMainActor() async throws {
        try await withHarness { harness in
            let store = harness.store
            store.configure { $0.delivery = .mainActor }
            let train = try await Seed.Train.get(id: 1, in: store)
            try await train.$cars.load()
            let cars = try await Seed.Car.query(where: ["train_id": 1], in: store)
            let company = MainActorWatch { _ = train.company }
            let members = MainActorWatch { _ = train.cars }
            let listed = MainActorWatch { _ = cars.instances }

            _ = try harness.server.store.update(
                try #require(harness.server.store.schema.resource(plural: "trains")), id: "1",
                attributes: ["company": "MonoRail Group"])
            try await train.fetch()
            // No waiting: the action returned after its observers were told.
            #expect(company.count == 1)
            #expect(train.company == "MonoRail Group")

            let made = Seed.Car()
            made.occupancy = 7
            made.train = train
            try await made.create(in: store)
            #expect(members.count == 1)
            #expect(listed.count == 1)
            #expect(cars.instances.contains { $0 === made })
        }
    }

    @Test(
        "with .mainActor, nothing is told while the main actor is busy; then everything, in order",
        arguments: [Delivery.immediate, .mainActor])
    func queuedForTheMainActor(delivery: Delivery) async throws {
        try await withHarness { harness in
            let store = harness.store
            store.configure { $0.delivery = delivery }
            let train = try await Seed.Train.get(id: 1, in: store)
            let company = MainActorWatch { _ = train.company }
            let received = Locked<[String]>([])
            let stream = Seed.Train.updates(in: store)
            let reader = Task.detached {
                for await update in stream {
                    let count = received.withLock { received in
                        received.append(update.instance.company ?? "")
                        return received.count
                    }
                    if count == 2 { return }
                }
            }

            // Merged on the main actor, which stays busy until the end of this block.
            let (toldAtOnce, readWhileBusy) = try await MainActor.run {
                _ = try Seed.Train.merge(json: ["id": 1, "company": "First"], in: store)
                let toldAtOnce = company.count
                _ = try Seed.Train.merge(json: ["id": 1, "company": "Second"], in: store)
                usleep(200_000)
                return (toldAtOnce, received.withLock { $0 })
            }
            switch delivery {
            case .immediate:
                #expect(toldAtOnce == 1)
            case .mainActor:
                #expect(toldAtOnce == 0)
                #expect(readWhileBusy.isEmpty)
            }

            await reader.value
            #expect(company.count == 1)
            // Each element handed over after its change: the instance already holds the last value.
            #expect(received.withLock { $0 } == ["Second", "Second"] || delivery == .immediate)
        }
    }

    @Test("a model's configure cannot set what the store decides: its actions are refused, naming the setting")
    func modelDelivery() async throws {
        try await withHarness { harness in
            let log = LogCapture()
            harness.store.configure { $0.logger = log.logger(level: .error) }
            let refused =
                "MainActorDeliveredTrain.configure(_:) sets delivery, storage, which only the store's "
                + "configuration decides (MonoRail.configure, or the store's configure); its actions are refused"
            let error = await #expect(throws: APIError.self) {
                try await MainActorDeliveredTrain.get(id: 1, in: harness.store)
            }
            #expect(error?.code == .invalidConfiguration && error?.message == refused)
            #expect(log.all.filter { $0.level == .error }.map(\.message) == [refused])
            #expect(harness.server.journal.entries.isEmpty, "nothing was sent")
            // A model that sets only its own settings is not refused.
            let train = try await Seed.Train.get(id: 1, in: harness.store)
            #expect(train.company == "MonoRail Co.")
        }
    }

    @Test("with .mainActor, a blocking call on the main actor does not wait for it")
    func blockingOnTheMainActor() async throws {
        try await withHarness { harness in
            let store = harness.store
            store.configure { $0.delivery = .mainActor }
            let train = try await Seed.Train.get(id: 1, in: store)
            let company = MainActorWatch { _ = train.company }
            _ = try harness.server.store.update(
                try #require(harness.server.store.schema.resource(plural: "trains")), id: "1",
                attributes: ["company": "MonoRail Group"])
            // A script's main thread blocked on the action: it returns; observers are told after.
            let toldWhileBlocked = try await MainActor.run {
                try train.blocking.fetch()
                return company.count
            }
            #expect(train.company == "MonoRail Group")
            #expect(toldWhileBlocked == 0)
            for _ in 0..<500 where company.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(company.count == 1)
        }
    }
}

/// A model that asks for a delivery and a record cache of its own, which only a store can set.
@Resource(name: "train")
final class MainActorDeliveredTrain {
    var company: String?

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.delivery = .mainActor
        configuration.storage = InMemoryRecordCache()
    }
}
