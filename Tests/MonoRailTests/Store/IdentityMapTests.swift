import Foundation
import MonoRailClient
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import TestServer
import Testing

@testable import MonoRail

@Suite("Identity map", .timeLimit(.minutes(5)))
struct IdentityMapTests {
    @Test("two get(id:) calls return one instance, and a holder sees every later merge")
    func oneInstance() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            let anotherTrain = try await Train.get(id: 1, in: harness.store)
            #expect(train === anotherTrain)
            _ = try harness.server.store.update(
                try #require(harness.server.store.schema.resource(plural: "trains")), id: "1",
                attributes: ["max_speed": 55.5])
            _ = try await Train.get(in: harness.store)
            #expect(anotherTrain.maxSpeed == 55.5)
        }
    }

    @Test("server state wins for unedited fields; unsaved edits are kept until saved or reverted")
    func editsSurviveMerges() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            train.company = "Local Edit"
            let resource = try #require(harness.server.store.schema.resource(plural: "trains"))
            _ = try harness.server.store.update(resource, id: "1", attributes: ["company": "Server", "max_speed": 99])
            try await train.fetch()
            #expect(train.company == "Local Edit")
            #expect(train.maxSpeed == 99)
            #expect(train.changes["company"] == FieldChange(field: "company", old: "Server", new: "Local Edit"))
            train.revert()
            #expect(train.company == "Server")
            #expect(!train.hasChanges)
            #expect(train.changes.isEmpty)
        }
    }

    @Test("setting a field back to the server value is not a change")
    func editBack() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            train.numberOfCars = 9
            #expect(train.hasChanges)
            train.numberOfCars = 5
            #expect(!train.hasChanges)
        }
    }

    @Test("edits made while a save is in flight stay pending")
    func editDuringSave() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A", "max_speed": 1}}"#)
            let train = try await Train.get(id: 1, in: store)
            train.company = "B"
            let snapshot = train._$state.snapshot()
            train.maxSpeed = 2  // after the snapshot a save would take
            // The server's answer to the save, merged as save() merges it.
            let context = store.setup(for: Train.self)
            let coder = FieldCoder(options: context.coding)
            let answer: JSONValue = ["id": 1, "company": "B", "max_speed": 1]
            let patch = try context.decoder(coder: coder, store: store).decode(answer, at: RecordLocation(base: "$"))
            _ = try store.merge(
                [patch], target: train, mode: .saved(sent: snapshot.edits), coder: coder, fetched: store.stamp())
            #expect(train.company == "B")
            #expect(train.maxSpeed == 2)
            #expect(train.changes.keys.sorted() == ["maxSpeed"])
        }
    }

    @Test("the store holds instances weakly")
    func weak() async throws {
        try await withHarness { harness in
            var trains: [Train]? = try await Train.get(in: harness.store)
            #expect(harness.store.count == 2)
            #expect(trains?.count == 2)
            trains = nil
            #expect(harness.store.count == 0)
            #expect(harness.store.instance(of: Train.self, id: 1) == nil)
            let fresh = try await Train.get(id: 1, in: harness.store)
            #expect(harness.store.count == 1)
            #expect(fresh.company == "MonoRail Co.")
        }
    }

    @Test("separate stores keep separate instances")
    func stores() async throws {
        try await withHarness { harness in
            let other = ResourceStore(configuration: harness.store.configuration)
            let a = try await Train.get(id: 1, in: harness.store)
            let b = try await Train.get(id: 1, in: other)
            #expect(a !== b)
            #expect(try await Train.get(id: 1, in: other) === b)
        }
    }

    @Test("withObservationTracking fires for a merge and for a local edit")
    func observation() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            // Nothing read it yet, so nothing can observe it: its registrar is made on first read.
            #expect(train._$state.registrarIfMade == nil)
            let fired = Counter()
            withObservationTracking {
                _ = train.maxSpeed
            } onChange: {
                fired.increment()
            }
            let resource = try #require(harness.server.store.schema.resource(plural: "trains"))
            _ = try harness.server.store.update(resource, id: "1", attributes: ["max_speed": 77])
            #expect(train._$state.registrarIfMade != nil)
            try await train.fetch()
            #expect(fired.value == 1)
            #expect(train.maxSpeed == 77)

            withObservationTracking {
                _ = train.company
            } onChange: {
                fired.increment()
            }
            train.company = "Edited"
            #expect(fired.value == 2)

            // A merge that changes nothing observed does not fire.
            withObservationTracking {
                _ = train.numberOfCars
            } onChange: {
                fired.increment()
            }
            try await train.fetch()
            #expect(fired.value == 2)
        }
    }

    @Test("updates streams report merges and edits per instance and per type")
    func updateStreams() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            var perInstance = train.updates.makeAsyncIterator()
            var perType = Train.updates(in: harness.store).makeAsyncIterator()
            train.company = "Edited"
            let edit = await perInstance.next()
            #expect(edit?.kind == .edited)
            #expect(edit?.fields == ["company"])
            #expect(await perType.next()?.instance === train)

            let resource = try #require(harness.server.store.schema.resource(plural: "trains"))
            _ = try harness.server.store.update(resource, id: "1", attributes: ["number_of_cars": 8])
            try await train.fetch()
            let merge = await perInstance.next()
            #expect(merge?.kind == .merged)
            #expect(merge?.fields == ["numberOfCars"])
        }
    }

    @Test("a record embedded by one record of a list and listed after it is one instance")
    func embeddedThenListed() throws {
        let store = ResourceStore(configuration: MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let body = Data(
            #"{"nodes": [{"id": 1, "children": [{"id": 2, "label": "child"}]}, {"id": 2, "label": "listed"}, {"id": 3}]}"#
                .utf8)
        let nodes = try Node.merge(listBody: body, in: store)
        #expect(nodes.count == 3)
        #expect(nodes[0].children.first === nodes[1])
        #expect(nodes[1].label == "listed")
        #expect(store.instance(of: Node.self, id: 2) === nodes[1])
    }

    @Test("create puts the new id into the map; delete takes it out")
    func createAndDelete() async throws {
        try await withHarness { harness in
            let conductor = Conductor()
            conductor.name = "Grace"
            try await conductor.create(in: harness.store)
            let id = try #require(conductor.id)
            #expect(try await Conductor.get(id: id, in: harness.store) === conductor)
            try await conductor.delete()
            #expect(harness.store.instance(of: Conductor.self, id: id) == nil)
            let error = try await #require(throws: APIError.self) { try await Conductor.get(id: id, in: harness.store) }
            #expect(error.statusCode == 404)
        }
    }
}

/// A thread-safe counter for callbacks.
final class Counter: Sendable {
    private let count = Locked(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
