import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import TestServer
import Testing

/// Relationships are observed as fields are: a screen reading `train.cars`, `train.conductor` or
/// `car.train` is told whenever the members or the target change, whatever changed them.
@Suite("Observing relationships", .timeLimit(.minutes(5)))
struct RelationshipObservationTests {
    /// Counts the changes `read` sees, watching again after each, as SwiftUI does.
    final class Watch: Sendable {
        /// Changes seen, and trackings registered (one at the start, one after each change).
        private let counts = Locked((fired: 0, tracked: 0))
        private let read: @Sendable () -> Void

        init(_ read: @escaping @Sendable () -> Void) {
            self.read = read
            track()
        }

        private func track() {
            withObservationTracking(read) { [self] in
                counts.withLock { $0.fired += 1 }
                // Told before the change is made (willSet), as Observation does.
                Task { self.track() }
            }
            counts.withLock { $0.tracked += 1 }
        }

        var count: Int { counts.withLock { $0.fired } }

        /// Waits until the re-tracking after the last change has run, so the next change is seen
        /// however busy the machine is; bounded, so a tracking that never comes back fails the test
        /// instead of hanging it.
        func settled() async {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, counts.withLock({ $0.tracked <= $0.fired }) {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }

        /// Whether it was told of a change after it had seen `seen`, waiting for it: a change made
        /// for another watch may reach this one after that one is told.
        func changed(since seen: Int) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, count <= seen {
                try? await Task.sleep(for: .milliseconds(1))
            }
            await settled()
            return count > seen
        }
    }

    static func serverResource(_ plural: String, _ harness: TestAPI) throws -> ResourceSchema {
        try #require(harness.server.store.schema.resource(plural: plural))
    }

    @Test("train.cars is told of a create, a merge, a re-point, an assignment, a delete, an unload and a prune")
    func hasMany() async throws {
        try await withHarness(configure: OrphanPruningTests.pruning) { harness in
            let store = harness.store
            let first = try await Seed.Train.get(id: 1, in: store)
            let second = try await Seed.Train.get(id: 2, in: store)
            try await first.$cars.load()
            try await second.$cars.load()
            #expect(first.cars.map(\.id) == [1, 2])
            let firstCars = Watch { _ = first.cars }
            let secondCars = Watch { _ = second.cars }

            // A create elsewhere.
            let made = Seed.Car()
            made.occupancy = 5
            made.train = first
            try await made.create(in: store)
            await firstCars.settled()
            #expect(firstCars.count >= 1)
            #expect(first.cars.map(\.id).contains(made.id))
            var told = firstCars.count

            // A merge: the server moved car 3 to train 1.
            _ = try harness.server.store.update(
                Self.serverResource("cars", harness), id: "3", attributes: ["train_id": 1])
            let third = try #require(store.instance(of: Seed.Car.self, id: 3))
            try await third.fetch()
            await firstCars.settled()
            #expect(firstCars.count > told)
            #expect(await secondCars.changed(since: 0))
            #expect(first.cars.contains { $0 === third })
            #expect(second.cars.isEmpty)
            told = firstCars.count
            var toldSecond = secondCars.count

            // A re-point, local and unsaved.
            third.train = second
            await firstCars.settled()
            #expect(firstCars.count > told)
            #expect(await secondCars.changed(since: toldSecond))
            #expect(second.cars.map(\.id) == [3])
            told = firstCars.count
            toldSecond = secondCars.count

            // An assignment.
            second.cars = [third, made]
            await secondCars.settled()
            #expect(secondCars.count > toldSecond)
            #expect(Set(second.cars.compactMap(\.id)) == Set([3, made.id].compactMap { $0 }))
            #expect(await firstCars.changed(since: told))
            told = firstCars.count
            toldSecond = secondCars.count

            // A delete.
            try await made.delete()
            await secondCars.settled()
            #expect(secondCars.count > toldSecond)
            #expect(second.cars.map(\.id) == [3])
            toldSecond = secondCars.count

            // An unload.
            try await store.unload(third)
            await secondCars.settled()
            #expect(secondCars.count > toldSecond)
            #expect(second.cars.isEmpty)

            // A prune: the server dropped car 2, and the authoritative list says so.
            #expect(try harness.server.store.delete(Self.serverResource("cars", harness), id: "2"))
            _ = try await Seed.Car.get(in: store)
            await firstCars.settled()
            #expect(firstCars.count > told)
            #expect(first.cars.map(\.id) == [1])
        }
    }

    @Test("train.conductor is told when a conductor moves to it or away, and when one is created for it")
    func hasOne() async throws {
        try await withHarness { harness in
            let store = harness.store
            let first = try await Seed.Train.get(id: 1, in: store)
            let second = try await Seed.Train.get(id: 2, in: store)
            try await first.$conductor.load()
            try await second.$conductor.load()
            let bill = try #require(first.conductor)
            #expect(bill.name == "Bill")
            let firstConductor = Watch { _ = first.conductor }
            let secondConductor = Watch { _ = second.conductor }

            // SPEC §4: the conductor moves, and both trains say so with no extra request.
            bill.train = second
            try await bill.save()
            await secondConductor.settled()
            #expect(firstConductor.count >= 1)
            #expect(secondConductor.count >= 1)
            #expect(first.conductor == nil)
            #expect(second.conductor === bill)

            let told = firstConductor.count
            let made = Seed.Conductor()
            made.name = "Grace"
            made.train = first
            try await made.create(in: store)
            await firstConductor.settled()
            #expect(firstConductor.count > told)
            #expect(first.conductor === made)
        }
    }

    @Test("car.train is told when the train it names arrives, is re-pointed, is deleted or is unloaded")
    func reference() async throws {
        try await withHarness { harness in
            let store = harness.store
            let car = try await Seed.Car.get(id: 3, in: store)
            #expect(car.train == nil)
            let train = Watch { _ = car.train }

            // Train 2 arrives by a read that has nothing to do with the car.
            let second = try await Seed.Train.get(id: 2, in: store)
            await train.settled()
            #expect(train.count == 1)
            #expect(car.train === second)

            // Re-pointed by the server.
            _ = try harness.server.store.update(
                Self.serverResource("cars", harness), id: "3", attributes: ["train_id": 1])
            let first = try await Seed.Train.get(id: 1, in: store)
            try await car.fetch()
            await train.settled()
            #expect(train.count == 2)
            #expect(car.train === first)

            // The train it names is deleted.
            try await first.delete()
            await train.settled()
            #expect(train.count == 3)
            #expect(car.train == nil)

            // Re-pointed here, then its train unloaded.
            car.train = second
            await train.settled()
            #expect(train.count == 4)
            #expect(car.train === second)
            try await store.unload(second)
            await train.settled()
            #expect(train.count == 5)
            #expect(car.train == nil)
        }
    }

    @Test("update streams say .related with the relationship's name")
    func updates() async throws {
        try await withHarness { harness in
            let store = harness.store
            let first = try await Seed.Train.get(id: 1, in: store)
            try await first.$cars.load()
            let updates = first.updates
            let made = Seed.Car()
            made.occupancy = 7
            made.train = first
            try await made.create(in: store)
            for await update in updates {
                #expect(update.kind == .related)
                #expect(update.fields == ["cars"])
                #expect(update.instance === first)
                break
            }
        }
    }

    @Test(
        "the seed's modal edit: a car edited and saved in one place, a car created in another; the list is told with no request"
    )
    func modalEdit() async throws {
        try await withHarness { harness in
            let store = harness.store
            // The list screen: train 1's cars, each row showing its occupancy.
            let train = try await Seed.Train.get(id: 1, in: store)
            try await train.$cars.load()
            let list = Watch { for car in train.cars { _ = car.occupancy } }
            let before = harness.journal.count

            // The modal: the same record, fetched on its own, edited and saved.
            let edited = try await Seed.Car.get(id: 2, policy: .cacheFirst, in: store)
            edited.occupancy = 99
            try await edited.save()
            await list.settled()
            #expect(list.count == 1)
            #expect(train.cars.map(\.occupancy) == [40, 99])

            // Another modal creates a car on the train.
            let made = Seed.Car()
            made.occupancy = 3
            made.train = train
            try await made.create(in: store)
            await list.settled()
            #expect(list.count == 2)
            #expect(train.cars.map(\.occupancy) == [40, 99, 3])
            // The list asked nothing of the server: only the modals' writes went out.
            #expect(Array(harness.journal.entries.dropFirst(before)) == ["PUT /cars/2", "POST /cars"])
        }
    }
}
