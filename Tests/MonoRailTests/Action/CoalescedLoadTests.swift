import Foundation
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

@testable import MonoRail

@Suite("Coalesced loads: one GET /trains?id[]=… for records wanted together", .timeLimit(.minutes(5)))
struct CoalescedLoadTests {
    /// A window long enough that tasks started together join one batch even on a busy machine.
    func withCoalescing(_ body: (TestAPI) async throws -> Void) async throws {
        try await withHarness(
            schema: ServerSchema.trainsEmbeddedInCars,
            configure: { $0.conventions.coalescedLoads = CoalescedLoads(window: .milliseconds(300)) }, body)
    }

    @Test("@References(.many).load() asks once for the records not live, and keeps the order of the ids")
    func referencesMany() async throws {
        try await withCoalescing { harness in
            let depot = TrainDepot()
            depot.name = "Hub"
            depot.trains = try await Seed.Train.get(ids: [2, 1], in: harness.store)
            #expect(harness.journal.entries.last == "GET /trains?id%5B%5D=2&id%5B%5D=1")
            try await depot.create(in: harness.store)
            let id = try #require(depot.id)

            let other = ResourceStore(configuration: harness.store.configuration)
            let copy = try await TrainDepot.get(id: id, in: other)
            let before = harness.journal.count
            let trains = try await copy.$trains.load()
            #expect(trains.map(\.id) == [2, 1])
            #expect(harness.journal.count == before + 1)
            #expect(harness.journal.entries.last?.hasPrefix("GET /trains?id%5B%5D=") == true)
        }
    }

    @Test("concurrent get(id:) calls become one request; each caller gets its own instance")
    func concurrentGets() async throws {
        try await withCoalescing { harness in
            let trains = try await withThrowingTaskGroup(of: Seed.Train.self) { group in
                for id in [1, 2, 1] { group.addTask { try await Seed.Train.get(id: id, in: harness.store) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(trains.compactMap { $0.id?.description }) == ["1", "2"])
            #expect(harness.journal.count == 1)
            #expect(harness.journal.entries.first?.hasPrefix("GET /trains?id%5B%5D=") == true)
        }
    }

    @Test("a record the answer leaves out is asked for alone, and a missing one is the 404 it is")
    func missingRecord() async throws {
        try await withCoalescing { harness in
            let error = await #expect(throws: APIError.self) {
                try await Seed.Train.get(ids: [1, 99], in: harness.store)
            }
            #expect(error?.response?.status == .notFound)
            #expect(harness.journal.entries.suffix(2) == ["GET /trains?id%5B%5D=1&id%5B%5D=99", "GET /trains/99"])
        }
    }

    @Test("a server that refuses the list is asked once per record")
    func refusedList() async throws {
        try await withCanned { server, store in
            store.configure { $0.conventions.coalescedLoads = CoalescedLoads(parameter: "ids") }
            server.respond(
                to: "GET /trains?ids%5B%5D=1&ids%5B%5D=2", status: 400, body: #"{"error": "unknown filter"}"#)
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A"}}"#)
            server.respond(to: "GET /trains/2", body: #"{"train": {"id": 2, "company": "B"}}"#)
            let trains = try await Seed.Train.get(ids: [1, 2], in: store)
            #expect(trains.map(\.company) == ["A", "B"])
            #expect(server.requests.count == 3)
        }
    }

    @Test("without coalescing, each record has its own request")
    func off() async throws {
        try await withHarness(schema: ServerSchema.trainsEmbeddedInCars) { harness in
            let trains = try await Seed.Train.get(ids: [1, 2], in: harness.store)
            #expect(trains.map(\.id) == [1, 2])
            #expect(Set(harness.journal.entries) == ["GET /trains/1", "GET /trains/2"])
        }
    }
}
