import Foundation
import MonoRail
import MonoRailTesting
import TestModels
import TestServer
import Testing

@Suite("Decoding policies and hooks", .timeLimit(.minutes(5)))
struct DecodingPolicyTests {
    @Test("lenient coercion reads numbers and Booleans given as strings")
    func lenient() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"{"train": {"id": 1, "company": 42, "number_of_cars": "5", "in_service": "true"}}"#)
            let train = try await LenientTrain.get(id: 1, in: store)
            #expect(train.company == "42")
            #expect(train.numberOfCars == 5)
            #expect(train.inService)
        }
    }

    @Test("the same values fail under the strict default, naming model, field and path")
    func strict() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "number_of_cars": "5"}}"#)
            let error = try await #require(throws: APIError.self) { try await Train.get(id: 1, in: store) }
            #expect(error.code == .decodingFailed)
            #expect(error.decodingFailure?.typeName == "Train")
            #expect(error.decodingFailure?.field == "numberOfCars")
            #expect(error.decodingFailure?.path == "$.train.number_of_cars")
            #expect(error.statusCode == 200)
            #expect(store.count == 0)
        }
    }

    @Test("shouldFail decides per property; assign converts values the type cannot read")
    func apicPolicy() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"{"train": {"id": 1, "company": "MonoRail Co.", "number_of_cars": "many", "status": 1}}"#)
            server.respond(to: "GET /trains/2", body: #"{"train": {"id": 2, "company": null, "number_of_cars": 3}}"#)
            server.respond(to: "GET /trains/3", body: #"{"train": {"id": 3, "number_of_cars": 3}}"#)
            let train = try await StrictCompanyTrain.get(id: 1, in: store)
            #expect(train.company == "MonoRail Co.")
            #expect(train.numberOfCars == 0)  // invalid, ignored: keeps its default
            #expect(train.status == .retired)  // converted by assign(undefinedValue:forProperty:)

            let nullCompany = try await #require(throws: APIError.self) {
                try await StrictCompanyTrain.get(id: 2, in: store)
            }
            #expect(nullCompany.decodingFailure?.field == "company")
            let missingCompany = try await #require(throws: APIError.self) {
                try await StrictCompanyTrain.get(id: 3, in: store)
            }
            #expect(missingCompany.decodingFailure?.path == "$.train.company")
            #expect(store.count == 1)
        }
    }

    @Test("customDeserialize and customSerialize rewrite records both ways")
    func customHooks() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "info": {"name": "Nested Co."}}}"#)
            server.respond(to: "PUT /trains/1", body: #"{"train": {"id": 1, "info": {"name": "Renamed"}}}"#)
            let train = try await CustomTrain.get(id: 1, in: store)
            #expect(train.company == "Nested Co.")
            train.company = "Renamed"
            try await train.save()
            let sent = try recordedBody(try #require(server.requests.last))["train"]
            #expect(sent == ["company": "Renamed", "client": "monorail", "action": "update"])
            #expect(train.company == "Renamed")
            #expect(!train.hasChanges)
        }
    }
}
