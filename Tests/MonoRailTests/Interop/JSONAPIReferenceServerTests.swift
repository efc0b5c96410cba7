import Foundation
import HTTPTypes
import MonoRail
import MonoRailServer
import MonoRailTesting
import MonoRailTransport
import Testing

/// The reference server's trains, as `monorail serve --conventions jsonapi` serves them.
enum Served {
    @Resource
    final class Train {
        var company: String?
        var numberOfCars: Int?
        var maxSpeed: Double?
        var inService: Bool?
        @Has var cars: [Car]
    }

    @Resource
    final class Car {
        var occupancy: Int?
        var needsRepairs: Bool?
        @References var train: Train?
    }
}

/// MonoRail's `.jsonAPI` preset against `monorail serve --conventions jsonapi`, and the server's
/// own JSON:API behaviour over raw HTTP: media types, error documents, atomic operations.
@Suite("JSON:API against the reference server", .timeLimit(.minutes(5)))
struct JSONAPIReferenceServerTests {
    typealias Train = Served.Train
    typealias Car = Served.Car

    func withServer(pageSize: Int? = nil, _ body: (ResourceStore, RunningReferenceServer) async throws -> Void)
        async throws
    {
        let server = try await ReferenceServer(
            schema: .trains, configuration: .init(port: 0, envelope: .jsonAPI, defaultPageSize: pageSize)
        ).start()
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .jsonAPI
        do {
            try await body(ResourceStore(configuration: configuration), server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Sends a raw request and returns the status and the parsed body.
    func raw(
        _ server: RunningReferenceServer, _ method: HTTPRequest.Method, _ path: String, contentType: String?,
        accept: String? = nil, body: String? = nil
    ) async throws -> (Int, JSONValue) {
        var request = HTTPRequest(
            method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/" + path)
        if let contentType { request.headerFields[.contentType] = contentType }
        if let accept { request.headerFields[.accept] = accept }
        let (response, data) = try await (transportUnderTest ?? MonoRail.defaultTransport).send(
            request, body: body.map { .data(Data($0.utf8)) }, metadata: RequestMetadata())
        let status = response.status.code
        return (status, data.isEmpty ? .null : try JSONParser().parse(data))
    }

    @Test("create, read with include, save only what changed, delete; cars from the train's linkage and links.related")
    func crud() async throws {
        try await withServer { store, server in
            let train = Train()
            train.company = "JSON Rail"
            train.numberOfCars = 2
            try await train.create(in: store)
            let id = try #require(train.id)
            #expect(server.journal.entries.last { $0.hasPrefix("POST /trains") } != nil)

            let car = Car()
            car.occupancy = 7
            car.train = train
            try await car.create(in: store)

            let other = ResourceStore(configuration: store.configuration)
            let read = try await Train.get(id: id, include: ["cars"], in: other)
            #expect(read.company == "JSON Rail")
            #expect(read.cars.map(\.occupancy) == [7])

            let fresh = ResourceStore(configuration: store.configuration)
            let unloaded = try await Train.get(id: id, in: fresh)
            #expect(unloaded.cars.isEmpty)
            #expect(try await unloaded.$cars.load().map(\.occupancy) == [7])

            // Changed by another client meanwhile: a PATCH of only max_speed leaves it.
            read.numberOfCars = 9
            try await read.save()
            train.maxSpeed = 99
            try await train.save()
            #expect(server.journal.entries.contains { $0.hasPrefix("PATCH /trains/\(id)") })
            #expect(train.numberOfCars == 9)
            #expect(train.maxSpeed == 99)

            try await car.delete()
            try await train.delete()
            let error = try await #require(throws: APIError.self) { try await Train.get(id: id, in: other) }
            #expect(error.statusCode == 404)
            #expect(error.errorObjects.first?.status == "404")
        }
    }

    @Test("a record refused: error objects point at its attributes and relationships")
    func validation() async throws {
        try await withServer { store, _ in
            let nameless = Train()
            nameless.numberOfCars = 1
            let error = try await #require(throws: APIError.self) { try await nameless.create(in: store) }
            #expect(error.statusCode == 422)
            #expect(error.errors["company"] == ["can't be blank"])
            #expect(nameless.errors["company"] == ["can't be blank"])
            #expect(error.errorObjects.first?.pointer == "/data/attributes/company")
        }
    }

    @Test("a server that pages by default: links.next to the end, the total from meta")
    func paging() async throws {
        try await withServer(pageSize: 1) { store, _ in
            for index in 0..<3 {
                let train = Train()
                train.company = "Extra \(index)"
                try await train.create(in: store)
            }
            let trains = try await Train.query(pageSize: 2, in: store)
            #expect(trains.total == 5)
            while trains.hasNextPage { try await trains.loadNextPage() }
            #expect(trains.instances.count == 5)
            #expect(try await Train.getAll(in: store).count == 5)
            let fast = try await Train.query(
                where: ["max_speed": .atLeast(100)], order: [.descending("max_speed")], in: store)
            #expect(fast.instances.map(\.company) == ["Deutsche Bahn AG"])
        }
    }

    @Test("offsets followed by links.next, and the cursor profile's page[after]")
    func pagingStyles() async throws {
        try await withServer(pageSize: 1) { store, _ in
            for index in 0..<3 {
                let train = Train()
                train.company = "Extra \(index)"
                try await train.create(in: store)
            }
            var configuration = store.configuration
            configuration.conventions.paging.style = .offsets(limit: "page[limit]", offset: "page[offset]")
            let offsets = ResourceStore(configuration: configuration)
            #expect(try await Train.getAll(in: offsets).compactMap(\.id?.description) == ["1", "2", "3", "4", "5"])
            let query = try await Train.query(pageSize: 2, in: offsets)
            #expect(query.total == 5)
            while query.hasNextPage { try await query.loadNextPage() }
            #expect(query.instances.count == 5)

            // The cursor profile's parameters, worked out by the client: the last record's id.
            configuration.conventions.paging.style = .cursor(
                parameter: "page[after]", size: "page[size]", nextCursorKey: nil)
            configuration.conventions.paging.followsLinks = false
            let cursors = ResourceStore(configuration: configuration)
            let walked = try await Train.query(pageSize: 2, in: cursors)
            while walked.hasNextPage { try await walked.loadNextPage() }
            #expect(walked.instances.compactMap(\.id?.description) == ["1", "2", "3", "4", "5"])
        }
    }

    @Test("media types: 415 for a body not sent as JSON:API, 406 for an Accept it cannot meet")
    func negotiation() async throws {
        try await withServer { _, server in
            let body = #"{"data": {"type": "trains", "attributes": {"company": "X"}}}"#
            let (plain, plainBody) = try await raw(server, .post, "trains", contentType: "application/json", body: body)
            #expect(plain == 415)
            #expect(plainBody["errors"]?[0]?["status"] == "415")
            let (parameter, _) = try await raw(
                server, .post, "trains", contentType: "application/vnd.api+json; charset=utf-8", body: body)
            #expect(parameter == 415)
            let (accept, _) = try await raw(
                server, .get, "trains", contentType: nil, accept: "application/vnd.api+json; charset=utf-8")
            #expect(accept == 406)
            let (created, _) = try await raw(
                server, .post, "trains", contentType: "application/vnd.api+json", body: body)
            #expect(created == 201)
            let (conflict, _) = try await raw(
                server, .post, "trains", contentType: "application/vnd.api+json",
                body: #"{"data": {"type": "cars", "attributes": {}}}"#)
            #expect(conflict == 409)
        }
    }

    @Test("atomic operations: a graph with lids in one transaction; one refused operation writes nothing")
    func atomicOperations() async throws {
        try await withServer { store, server in
            let atomic = #"application/vnd.api+json; ext="https://jsonapi.org/ext/atomic""#
            let graph = #"""
                {"atomic:operations": [
                  {"op": "add", "data": {"type": "trains", "lid": "t", "attributes": {"company": "Graph"}}},
                  {"op": "add", "data": {"type": "cars", "lid": "c", "attributes": {"occupancy": 1},
                                         "relationships": {"train": {"data": {"type": "trains", "lid": "t"}}}}},
                  {"op": "update", "data": {"type": "cars", "lid": "c", "attributes": {"occupancy": 2}}}]}
                """#
            let (status, results) = try await raw(server, .post, "operations", contentType: atomic, body: graph)
            #expect(status == 200)
            let trainID = try #require(results["atomic:results"]?[0]?["data"]?["id"]?.stringValue)
            #expect(results["atomic:results"]?[0]?["data"]?["lid"] == "t")
            #expect(results["atomic:results"]?[2]?["data"]?["attributes"]?["occupancy"] == 2)
            #expect(
                results["atomic:results"]?[1]?["data"]?["relationships"]?["train"]?["data"]?["id"]
                    == .string(trainID))

            let before = try await Train.getAll(in: store).count
            let refused = #"""
                {"atomic:operations": [
                  {"op": "add", "data": {"type": "trains", "lid": "t", "attributes": {"company": "Half"}}},
                  {"op": "add", "data": {"type": "trains", "attributes": {"number_of_cars": 1}}}]}
                """#
            let (refusedStatus, errors) = try await raw(server, .post, "operations", contentType: atomic, body: refused)
            #expect(refusedStatus == 422)
            #expect(errors["errors"]?[0]?["source"]?["pointer"] == "/atomic:operations/1/data/attributes/company")
            #expect(try await Train.getAll(in: store).count == before, "the first add was rolled back")

            let (plain, _) = try await raw(
                server, .post, "operations", contentType: "application/vnd.api+json", body: graph)
            #expect(plain == 415)
        }
    }

    @Test("a to-many's members at its relationship endpoint")
    func relationshipEndpoint() async throws {
        try await withServer { _, server in
            let type = "application/vnd.api+json"
            let (status, linkage) = try await raw(
                server, .delete, "trains/1/relationships/cars", contentType: type,
                body: #"{"data": [{"type": "cars", "id": "1"}]}"#)
            #expect(status == 200)
            #expect(linkage["data"] == [["type": "cars", "id": "2"]])
            let (added, after) = try await raw(
                server, .post, "trains/1/relationships/cars", contentType: type,
                body: #"{"data": [{"type": "cars", "id": "3"}]}"#)
            #expect(added == 200)
            #expect(after["data"] == [["type": "cars", "id": "2"], ["type": "cars", "id": "3"]])
        }
    }
}

/// The outbox's graphs: a record created offline with the writes naming it, sent as one atomic
/// operations request to `monorail serve --conventions jsonapi`.
@Suite("JSON:API atomic operations from the outbox", .timeLimit(.minutes(5)))
struct JSONAPIOutboxGraphTests {
    typealias Train = Served.Train
    typealias Car = Served.Car

    func withQueuedStore(_ body: (ResourceStore, RunningReferenceServer, RecordStore) async throws -> Void)
        async throws
    {
        let reference = try ReferenceServer(schema: .trains, configuration: .init(port: 0, envelope: .jsonAPI))
        let server = try await reference.start()
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .jsonAPI
        configuration.writePolicy = .queued
        configuration.allowsQueuedWritesLostOnQuit = true
        let store = ResourceStore(configuration: configuration)
        do {
            // A first answer says the server serves the extension (`jsonapi.ext`).
            _ = try await Train.get(id: 1, in: store)
            // Made while offline: nothing goes until flush().
            store.outbox.isPaused = true
            try await body(store, server, reference.store)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("a train, its new car and an update of that car: one POST /operations, ids back in the app's objects")
    func graph() async throws {
        try await withQueuedStore { store, server, records in
            let train = Train()
            train.company = "Offline Rail"
            try await train.create(in: store)
            let car = Car()
            car.occupancy = 3
            car.train = train
            try await car.create(in: store)
            car.occupancy = 4
            try await car.save()
            #expect(train.id?.isLocal == true && car.id?.isLocal == true)
            let pending = store.outbox.pending
            #expect(pending.map(\.verb) == [.create, .create, .update])

            server.journal.reset()
            try await store.outbox.flush()
            #expect(server.journal.entries == ["POST /operations"])
            let trainID = try #require(train.id)
            let carID = try #require(car.id)
            #expect(!trainID.isLocal && !carID.isLocal)
            #expect(car.train === train)
            #expect(train.cars.contains { $0 === car })
            #expect(!train.hasChanges && !car.hasChanges)
            #expect(store.outbox.pendingCount == 0)
            let stored = try #require(try records.find("cars", id: carID.description))
            #expect(stored["occupancy"] == 4)
            #expect(stored["train_id"] == .int(Int64(trainID.description) ?? -1))
        }
    }

    @Test("a graph whose request failed goes again whole, under the same key kept on each of its writes")
    func resentWhole() async throws {
        let reference = try ReferenceServer(
            schema: .trains, configuration: .init(port: 0, envelope: .jsonAPI, faults: FaultInjection(failFirst: 1)))
        let server = try await reference.start()
        defer { Task { await server.stop() } }
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .jsonAPI
        configuration.conventions.atomicOperations = .always(path: "/operations")
        configuration.writePolicy = .queued
        configuration.allowsQueuedWritesLostOnQuit = true
        configuration.retryPolicy = .none
        let store = ResourceStore(configuration: configuration)
        store.outbox.isPaused = true
        let train = Train()
        train.company = "Second Try"
        try await train.create(in: store)
        let car = Car()
        car.train = train
        try await car.create(in: store)
        let key = try #require(store.outbox.pending.first?.idempotencyKey)

        _ = try? await store.outbox.flush()  // 503: the graph waits
        #expect(store.outbox.pending.map(\.batch) == [key, key])
        #expect(train.id?.isLocal == true)
        let refused = server.journal.entries.filter { $0 == "POST /operations" }.count
        // Paused: sent again when flushed, once the failure's back-off has passed.
        for _ in 0..<80 where store.outbox.pendingCount > 0 {
            try await Task.sleep(for: .milliseconds(250))
            _ = try? await store.outbox.flush()
        }
        #expect(store.outbox.pendingCount == 0)
        #expect(server.journal.entries.filter { $0 == "POST /operations" }.count > refused)
        #expect(!server.journal.entries.contains { $0.hasPrefix("POST /trains") || $0.hasPrefix("POST /cars") })
        #expect(train.id?.isLocal == false && car.train === train)
        let trains = try #require(reference.store.schema.resource(plural: "trains"))
        #expect(try reference.store.list(trains, filters: ["company": "Second Try"]).total == 1)
    }

    @Test("one refused operation: nothing written, the refused record shows its errors, the rest wait with it")
    func refused() async throws {
        try await withQueuedStore { store, server, records in
            let trains = try #require(records.schema.resource(plural: "trains"))
            let before = try records.list(trains, filters: [:]).total
            let train = Train()  // no company: refused
            train.numberOfCars = 2
            try await train.create(in: store)
            let car = Car()
            car.occupancy = 1
            car.train = train
            try await car.create(in: store)

            server.journal.reset()
            try await store.outbox.flush()
            #expect(server.journal.entries == ["POST /operations"])
            #expect(try records.list(trains, filters: [:]).total == before)
            #expect(train.rejection?.code == .validationFailed)
            #expect(train.errors["company"] == ["can't be blank"])
            #expect(car.rejection?.code == .dependencyRejected)
            #expect(store.outbox.parked.count == 2)
            #expect(train.id?.isLocal == true && train.numberOfCars == 2)

            // Fixed and saved: the train goes again under a new key, and its car after it.
            train.company = "Fixed Rail"
            try await train.save()
            try await store.outbox.flush()
            #expect(store.outbox.pendingCount == 0 && store.outbox.parked.isEmpty)
            #expect(train.id?.isLocal == false && car.id?.isLocal == false)
            #expect(car.train === train)
            #expect(try records.list(trains, filters: [:]).total == before + 1)
        }
    }
}
