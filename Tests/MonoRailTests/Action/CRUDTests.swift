import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@Suite("CRUD against the reference server", .timeLimit(.minutes(5)))
struct CRUDTests {
    @Test("get(id:) reads every field and returns the store's one instance")
    func getByID() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            #expect(train.id == 1)
            #expect(train.company == "MonoRail Co.")
            #expect(train.numberOfCars == 5)
            #expect(train.maxSpeed == 46.8)
            #expect(train.inService)
            #expect(train.tags == ["monorail"])
            let again = try await Train.get(id: 1, in: harness.store)
            #expect(again === train)
            #expect(harness.store.count == 1)
        }
    }

    @Test("create, save, fetch and delete follow the Rails routes")
    func lifecycle() async throws {
        try await withHarness { harness in
            let train = Train()
            train.company = "Acme Rail"
            train.numberOfCars = 3
            #expect(train.hasChanges)
            try await train.create(in: harness.store)
            let id = try #require(train.id)
            #expect(!train.hasChanges)
            #expect(harness.store.instance(of: Train.self, id: id) === train)

            train.maxSpeed = 120.5
            #expect(train.changes["maxSpeed"]?.new == 120.5)
            try await train.save()
            #expect(!train.hasChanges)

            let stored = try #require(try harness.server.store.find("trains", id: id.description))
            #expect(stored["max_speed"] == 120.5)
            #expect(stored["company"] == "Acme Rail")

            try await train.fetch()
            #expect(train.maxSpeed == 120.5)

            try await train.delete()
            #expect(train.isDeleted)
            #expect(harness.store.instance(of: Train.self, id: id) == nil)
            #expect(try harness.server.store.find("trains", id: id.description) == nil)
            #expect(
                harness.journal.entries.suffix(4) == [
                    "POST /trains", "PUT /trains/\(id)", "GET /trains/\(id)", "DELETE /trains/\(id)",
                ])
        }
    }

    @Test("a save with nothing changed sends nothing; writes answer with their response as reads do")
    func writeResponses() async throws {
        try await withHarness { harness in
            let store = harness.store
            let train = try await Train.get(id: 1, in: store)
            let before = harness.journal.count
            let unchanged = try await train.save()
            #expect(harness.journal.count == before)
            #expect(unchanged.source == .unchanged)
            #expect(unchanged.value === train)
            #expect(unchanged.request == nil)

            train.company = "MonoRail Group"
            let saved = try await train.save()
            #expect(harness.journal.entries.last == "PUT /trains/1")
            #expect(saved.source == .network)
            #expect(saved.status == .ok)
            #expect(saved.request?.method == .put)
            #expect(saved.headerFields[.contentType]?.hasPrefix("application/json") == true)
            #expect(saved.value === train)
            // Set back to what the server has: nothing to send again.
            train.company = "MonoRail Group"
            #expect(try await train.save().source == .unchanged)

            let made = Train()
            made.company = "Tiny Trains"
            let created = try await made.create(in: store)
            #expect(created.status == .created)
            #expect(created.value === made)
            #expect(created.request?.method == .post)

            let fetched = try await made.fetch()
            #expect(fetched.status == .ok)
            #expect(fetched.source == .network)

            let deleted = try await made.delete()
            #expect(deleted.status == .noContent)
            #expect(deleted.request?.method == .delete)
        }
    }

    @Test("get() and get(where:) return list instances merged into the store")
    func lists() async throws {
        try await withHarness { harness in
            let trains = try await Train.get(in: harness.store)
            #expect(trains.map(\.company) == ["MonoRail Co.", "Deutsche Bahn AG"])
            let cars = try await Car.get(where: ["train_id": 1], in: harness.store)
            #expect(cars.count == 2)
            #expect(cars.allSatisfy { $0.trainId == 1 })
            let one = try await Train.get(id: 1, in: harness.store)
            #expect(one === trains[0])
            #expect(harness.journal.entries.contains("GET /trains?train_id=1") == false)
            #expect(harness.journal.entries.contains("GET /cars?train_id=1"))
        }
    }
}
