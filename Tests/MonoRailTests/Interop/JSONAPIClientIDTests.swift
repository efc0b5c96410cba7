import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Testing

/// JSON:API's client-generated ids against `monorail serve --conventions jsonapi`: a server of
/// string ids takes the id a create sends, one of integer ids answers 403, a taken id 409.
@Suite("JSON:API client-generated ids against the reference server", .timeLimit(.minutes(5)))
struct JSONAPIClientIDTests {
    typealias Train = Served.Train
    typealias Car = Served.Car

    /// Runs `body` against a reference server of string ids (or integer ids), with a store that
    /// sends directly or, `queued`, keeps writes in a paused outbox.
    func withServer(
        stringIDs: Bool = true, queued: Bool = false,
        _ body: (ResourceStore, RunningReferenceServer, RecordStore) async throws -> Void
    ) async throws {
        var schema = ServerSchema.trains
        schema.idType = stringIDs ? .string : .integer
        // The example's seed names its records by integer ids.
        schema.seed = nil
        let reference = try ReferenceServer(schema: schema, configuration: .init(port: 0, envelope: .jsonAPI))
        let server = try await reference.start()
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .jsonAPI
        if queued {
            configuration.writePolicy = .queued
            configuration.allowsQueuedWritesLostOnQuit = true
        }
        let store = ResourceStore(configuration: configuration)
        do {
            // A first answer says the server serves the atomic extension.
            _ = try await Train.get(in: store)
            if queued { store.outbox.isPaused = true }
            try await body(store, server, reference.store)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("a create sends the app's id; the server keeps it, a second create of it is 409 and takes nothing")
    func direct() async throws {
        try await withServer { store, server, records in
            let id = UUID().uuidString.lowercased()
            let train = Train()
            train.company = "Client Rail"
            let answer = try await train.create(in: store, id: .string(id))
            #expect(answer.status == .created)
            #expect(train.id == .string(id))
            #expect(store.instance(of: Train.self, id: ResourceID.string(id)) === train)
            #expect(try records.find("trains", id: id)?["company"] == "Client Rail")

            // Live in this store: refused before anything is sent.
            let twin = Train()
            do {
                try await twin.create(in: store, id: .string(id))
                Issue.record("expected the live record to refuse it")
            } catch let error as APIError {
                #expect(error.code == .invalidRequest && error.statusCode == nil)
            }
            #expect(twin.id == nil)

            // Another app's store: the server has it.
            let again = Train()
            again.company = "Second"
            let elsewhere = ResourceStore(configuration: store.configuration)
            do {
                try await again.create(in: elsewhere, id: .string(id))
                Issue.record("expected 409")
            } catch let error as APIError {
                #expect(error.statusCode == 409)
            }
            #expect(again.id == nil)
            #expect(elsewhere.count == 0)
            #expect(store.instance(of: Train.self, id: ResourceID.string(id)) === train)
            #expect(try records.find("trains", id: id)?["company"] == "Client Rail")
        }
    }

    @Test("a server that makes its ids answers 403 to one sent, and the instance stays without an id")
    func refused() async throws {
        try await withServer(stringIDs: false) { store, _, _ in
            let train = Train()
            train.company = "Refused"
            let before = store.count
            do {
                try await train.create(in: store, id: "client-7")
                Issue.record("expected 403")
            } catch let error as APIError {
                #expect(error.statusCode == 403)
            }
            #expect(train.id == nil)
            #expect(store.count == before)
            try await train.create(in: store)
            #expect(train.id != nil)
        }
    }

    @Test("kept in the outbox, the record has its own id at once, and a car naming it is sent after it")
    func queued() async throws {
        try await withServer(queued: true) { store, server, records in
            let id = UUID().uuidString.lowercased()
            let train = Train()
            train.company = "Offline Client Rail"
            let answer = try await train.create(in: store, id: .string(id))
            #expect(answer.source == .outbox)
            #expect(train.id == .string(id))
            #expect(store.instance(of: Train.self, id: ResourceID.string(id)) === train)
            let car = Car()
            car.occupancy = 2
            car.train = train
            try await car.create(in: store)

            server.journal.reset()
            try await store.outbox.flush()
            #expect(store.outbox.pendingCount == 0)
            #expect(
                server.journal.entries.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
                    == ["POST /trains", "POST /cars"])
            #expect(train.id == .string(id))
            let carID = try #require(car.id)
            #expect(!carID.isLocal)
            #expect(try records.find("cars", id: carID.description)?["train_id"] == .string(id))
            #expect(car.train === train)
        }
    }

    @Test("a kept create whose id is taken is refused, and the car naming it waits, parked, never sent")
    func queuedTaken() async throws {
        try await withServer(queued: true) { store, server, records in
            let trains = try #require(records.schema.resource(plural: "trains"))
            let taken = try #require(try records.create(trains, attributes: ["company": "There"])["id"]?.stringValue)
            let train = Train()
            train.company = "Too Late"
            try await train.create(in: store, id: .string(taken))
            let car = Car()
            car.occupancy = 1
            car.train = train
            try await car.create(in: store)

            server.journal.reset()
            try? await store.outbox.flush()
            #expect(
                server.journal.entries.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
                    == ["POST /trains"])
            #expect(train.rejection?.statusCode == 409)
            #expect(car.rejection?.code == .dependencyRejected)
            #expect(try records.find("trains", id: taken)?["company"] == "There")
        }
    }
}
