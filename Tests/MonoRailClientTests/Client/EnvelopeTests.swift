import Foundation
import MonoRail
import TestServer
import Testing

struct Car: Codable, Equatable, Sendable {
    var id: Int
    var occupancy: Int
}

@Suite("Envelopes", .timeLimit(.minutes(5)))
struct EnvelopeTests {
    func respond(_ body: String) -> APIPath { "/respond?body=\(verbatim: q(body))" }

    @Test("unwraps a singular root and keeps side-loaded records")
    func singularRoot() async throws {
        let server = try await TestServer.shared()
        let path = respond(#"{"car": {"id": 1, "occupancy": 40}, "trains": [{"id": 9}], "meta": {"v": 1}}"#)
        let envelope = try await makeClient(server).envelope(
            APIRequest(method: .get, path: path, responseRoots: ["car"]), as: Car.self)
        #expect(envelope.value == Car(id: 1, occupancy: 40))
        #expect(envelope.sideloaded["trains"] == [["id": 9]])
        #expect(envelope.sideloaded["meta"] == ["v": 1])
        #expect(envelope.sideloaded["car"] == nil)
    }

    @Test("unwraps a plural root")
    func pluralRoot() async throws {
        let server = try await TestServer.shared()
        let cars: [Car] = try await makeClient(server).get(
            respond(#"{"cars": [{"id": 1, "occupancy": 1}, {"id": 2, "occupancy": 2}]}"#), root: "cars")
        #expect(cars.map(\.id) == [1, 2])
    }

    @Test("decodes bare bodies when the root is absent")
    func bare() async throws {
        let server = try await TestServer.shared()
        let cars: [Car] = try await makeClient(server).get(respond(#"[{"id": 3, "occupancy": 0}]"#), root: "cars")
        #expect(cars == [Car(id: 3, occupancy: 0)])
        let car: Car = try await makeClient(server).get(respond(#"{"id": 4, "occupancy": 5}"#))
        #expect(car.id == 4)
    }

    @Test("follows a dotted root namespace, then the root key", arguments: ["data", "data.result"])
    func namespace(path: String) async throws {
        let server = try await TestServer.shared()
        var body: JSONValue = ["car": ["id": 5, "occupancy": 2], "cars": [["id": 6, "occupancy": 1]]]
        for key in path.split(separator: ".").reversed() { body = [String(key): body] }
        let client = makeClient(server) { $0.envelope.rootNamespace = path }
        let envelope = try await client.envelope(
            APIRequest(method: .get, path: respond(body.description), responseRoots: ["car"]), as: Car.self)
        #expect(envelope.value.id == 5)
        #expect(envelope.sideloaded["cars"] == [["id": 6, "occupancy": 1]])
    }

    @Test("a configured copy of a client follows other conventions without changing the original")
    func configuredCopy() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let legacy = client.configured {
            $0.envelope.rootNamespace = "data"
            $0.coding.keyMapping = .identity
        }
        struct Legacy: Decodable { var maxSpeed: Double }
        let value: Legacy = try await legacy.get(respond(#"{"data": {"maxSpeed": 3.5}}"#))
        #expect(value.maxSpeed == 3.5)
        #expect(client.configuration.envelope.rootNamespace == nil)
        let error = await #expect(throws: APIError.self) {
            let _: Legacy = try await client.get(respond(#"{"data": {"maxSpeed": 3.5}}"#))
        }
        #expect(error?.decodingFailure?.key == "max_speed")
    }

    @Test("a missing namespace is a decoding error naming it")
    func missingNamespace() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) { $0.envelope.rootNamespace = "data.result" }
        let error = await #expect(throws: APIError.self) {
            let _: Car = try await client.get(respond(#"{"data": {}}"#), root: "car")
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.key == "data.result")
    }
}
