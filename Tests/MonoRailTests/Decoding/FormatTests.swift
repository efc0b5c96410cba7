import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Models round-trip against the reference server in every format: MessagePack both ways, Rails
/// forms, and multipart bodies carrying files.
@Suite("Formats against the reference server")
struct FormatTests {
    static func messagePack(_ configuration: inout MonoRail.Configuration) { configuration.format = .messagePack }
    static func form(_ configuration: inout MonoRail.Configuration) { configuration.format = .formURLEncoded }

    @Test("models round-trip in MessagePack, requests and responses")
    func messagePackRoundTrip() async throws {
        try await withHarness(configure: Self.messagePack) { harness in
            let store = harness.store
            let built = Date(timeIntervalSince1970: 1_700_000_000.5)
            let train = Train()
            train.company = "Zürich Packed AG"
            train.numberOfCars = 7
            train.maxSpeed = 99.5
            train.builtAt = built
            train.tags = ["msgpack", "fast"]
            try await train.create(in: store)
            let id = try #require(train.id)
            train.maxSpeed = 120.25
            try await train.save()
            try await train.fetch()
            #expect(train.maxSpeed == 120.25)
            #expect(train.builtAt == built)

            // Every request asked for MessagePack and every body was MessagePack.
            let requests = harness.journal.requests
            #expect(requests.map(\.line) == ["POST /trains", "PUT /trains/\(id)", "GET /trains/\(id)"])
            #expect(requests.allSatisfy { $0.accept?.hasPrefix("application/x-msgpack") == true })
            #expect(requests.compactMap(\.contentType) == ["application/x-msgpack", "application/x-msgpack"])

            // The identity map holds one instance whichever format brought the record.
            let jsonStore = ResourceStore(
                configuration: MonoRail.Configuration.testing(harness.server.baseURL))
            let viaJSON = try await Train.get(id: id, in: jsonStore)
            let viaPack = try await Train.get(id: id, in: store)
            #expect(viaPack === train)
            for (name, lhs, rhs) in [
                ("company", viaJSON.company as Any, viaPack.company as Any),
                ("cars", viaJSON.numberOfCars as Any, viaPack.numberOfCars as Any),
                ("speed", viaJSON.maxSpeed as Any, viaPack.maxSpeed as Any),
                ("built", viaJSON.builtAt as Any, viaPack.builtAt as Any),
                ("tags", viaJSON.tags as Any, viaPack.tags as Any),
            ] {
                #expect(String(describing: lhs) == String(describing: rhs), "\(name)")
            }
            let all = try await Train.get(in: store)
            #expect(all.contains { $0 === train })
        }
    }

    @Test("the server answers MessagePack only when asked, and the client reads what it gets")
    func negotiation() async throws {
        try await withHarness { harness in
            let api = APIClient(
                configuration: .init(baseURL: harness.server.baseURL, transport: MonoRail.defaultTransport))
            let packed = try await api.send(
                APIRequest(method: .get, path: "/trains/1", options: RequestOptions(format: .messagePack)))
            #expect(packed.response.headerFields[.contentType] == "application/x-msgpack")
            let tree = try MessagePackReader().read(packed.body)
            #expect(tree["train"]?["company"] == "MonoRail Co.")
            #expect(try packed.json()["train"]?["company"] == "MonoRail Co.")
            let plain = try await api.send(APIRequest(method: .get, path: "/trains/1"))
            #expect(plain.response.headerFields[.contentType]?.hasPrefix("application/json") == true)
            #expect(try plain.json() == packed.json())
            // `application/msgpack` is understood too, and JSON ranked higher wins.
            var request = APIRequest(method: .get, path: "/trains/1")
            request.headers[.accept] = "application/msgpack"
            #expect(try await api.send(request).response.headerFields[.contentType] == "application/x-msgpack")
            request.headers[.accept] = "application/msgpack;q=0.4, application/json"
            #expect(
                try await api.send(request).response.headerFields[.contentType]?.hasPrefix("application/json") == true)
        }
    }

    @Test("one model speaks MessagePack while the store speaks JSON")
    func perModelFormat() async throws {
        try await withHarness { harness in
            let train = try await PackedTrain.get(id: 1, in: harness.store)
            #expect(train.company == "MonoRail Co.")
            _ = try await Train.get(id: 1, in: harness.store)
            let accepts = harness.journal.requests.map { $0.accept ?? "" }
            #expect(accepts.count == 2)
            #expect(accepts[0].hasPrefix("application/x-msgpack"))
            #expect(accepts[1] == "application/json")
        }
    }

    @Test("validation errors and bad bodies in MessagePack are typed; the model keeps its edits")
    func messagePackFailures() async throws {
        try await withHarness(configure: Self.messagePack) { harness in
            let nameless = Train()
            nameless.numberOfCars = 3
            let error = try await #require(throws: APIError.self) { try await nameless.create(in: harness.store) }
            #expect(error.code == .validationFailed)
            #expect(error.errors["company"] == ["can't be blank"])
            #expect(nameless.numberOfCars == 3)
            #expect(nameless.id == nil)
        }
        // A server that answers broken MessagePack: typed error, the live instance untouched.
        let body = MessagePackWriter.serialize(["train": ["id": 1, "company": "Changed"]] as JSONValue)
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", contentType: "application/x-msgpack", data: body)
            let train = try await Train.get(id: 1, in: store)
            #expect(train.company == "Changed")
            server.respond(to: "GET /trains/1", contentType: "application/msgpack", data: body.dropLast(3))
            let error = try await #require(throws: APIError.self) { try await train.fetch() }
            #expect(error.code == .decodingFailed)
            #expect(error.underlyingError is MessagePackError)
            #expect(train.company == "Changed")
        }
    }

    @Test("models save as Rails forms: train[company]=…, read back typed")
    func formBodies() async throws {
        try await withHarness(configure: Self.form) { harness in
            let train = Train()
            train.company = "Form & Co = ü"
            train.numberOfCars = 4
            train.maxSpeed = 80.5
            train.inService = true
            train.tags = ["form", "rails"]
            try await train.create(in: harness.store)
            #expect(harness.journal.requests.first?.contentType == "application/x-www-form-urlencoded")
            let id = try #require(train.id)
            let fresh = try await Train.get(
                id: id,
                in: ResourceStore(
                    configuration: MonoRail.Configuration.testing(harness.server.baseURL)))
            #expect(fresh.company == "Form & Co = ü")
            #expect(fresh.numberOfCars == 4)
            #expect(fresh.maxSpeed == 80.5)
            #expect(fresh.inService == true)
            #expect(fresh.tags == ["form", "rails"])
        }
    }
}
