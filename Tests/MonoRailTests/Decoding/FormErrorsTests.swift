import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import Testing

@Suite(
    "Form errors: kept on the instance, read at ApiModel's 400, and on a response read without throwing",
    .timeLimit(.minutes(5)))
struct FormErrorsTests {
    @Test("a refused create keeps the errors on the instance; the next successful create clears them")
    func create() async throws {
        try await withHarness { harness in
            let train = Train()
            train.numberOfCars = 3
            #expect(!train.hasErrors)
            let error = try await #require(throws: APIError.self) { try await train.create(in: harness.store) }
            #expect(error.code == .validationFailed)
            #expect(train.hasErrors)
            #expect(train.errors == error.errors)
            #expect(train.errors["company"] == ["can't be blank"])
            #expect(train.errorMessages == ["Company can't be blank"])
            #expect(train.id == nil)
            #expect(train.numberOfCars == 3)

            train.company = "MonoRail Co."
            try await train.create(in: harness.store)
            #expect(!train.hasErrors)
            #expect(train.errors.isEmpty)
            #expect(train.errorMessages.isEmpty)
            #expect(train.id != nil)
        }
    }

    @Test("a refused save keeps its errors and its edits; a save that succeeds clears them, and observers hear both")
    func save() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            let fired = Counter()
            withObservationTracking {
                _ = train.errors
            } onChange: {
                fired.increment()
            }
            train.company = String(repeating: "x", count: 201)
            let error = try await #require(throws: APIError.self) { try await train.save() }
            #expect(error.code == .validationFailed)
            #expect(fired.value == 1)
            #expect(train.errors["company"] == ["is too long (maximum is 200 characters)"])
            #expect(train.hasChanges)

            withObservationTracking {
                _ = train.hasErrors
            } onChange: {
                fired.increment()
            }
            train.company = "Shorter"
            try await train.save()
            #expect(fired.value == 2)
            #expect(!train.hasErrors)
            #expect(!train.hasChanges)

            // Nothing refused, nothing cleared: observers of the errors are not told again.
            withObservationTracking {
                _ = train.errors
            } onChange: {
                fired.increment()
            }
            train.numberOfCars = 9
            try await train.save()
            #expect(fired.value == 2)
        }
    }

    @Test("errors describe the last write: reading the record again leaves them as they are")
    func reads() async throws {
        try await withHarness { harness in
            let train = try await Train.get(id: 1, in: harness.store)
            train.company = ""
            _ = try? await train.save()
            #expect(train.errors["company"] == ["can't be blank"])
            try await train.fetch()
            #expect(train.errors["company"] == ["can't be blank"])
            _ = try await Train.get(id: 1, in: harness.store)
            #expect(train.hasErrors)
        }
    }

    @Test("ApiModel's 400 {\"train\": {\"errors\": …}} is a validation failure, kept on the instance")
    func apiModelShape() async throws {
        try await withHarness(server: .init(envelope: .apiModel)) { harness in
            let train = Train()
            train.numberOfCars = 3
            let error = try await #require(throws: APIError.self) { try await train.create(in: harness.store) }
            #expect(error.code == .validationFailed)
            #expect(error.statusCode == 400)
            #expect(error.parsedBody?["train"]?["errors"] != nil)
            #expect(train.errors["company"] == ["can't be blank"])
            #expect(train.errorMessages == ["Company can't be blank"])

            train.company = "MonoRail Co."
            try await train.create(in: harness.store)
            #expect(!train.hasErrors)
        }
    }

    @Test("through APIClient: ApiModel's 400 throws validation errors; a plain 400 stays an HTTP error")
    func clientAt400() async throws {
        try await withHarness(server: .init(envelope: .apiModel)) { harness in
            let api = APIClient(configuration: .init(baseURL: harness.server.baseURL, retryPolicy: .none))
            let refused = try await #require(throws: APIError.self) {
                try await api.post("/trains", body: ["number_of_cars": 3], root: "train", as: EmptyResponse.self)
            }
            #expect(refused.code == .validationFailed)
            #expect(refused.errors["company"] == ["can't be blank"])

            // The reference server's 400 for a body that is not JSON: {"error": …, "message": …}.
            let malformed = try await #require(throws: APIError.self) {
                try await api.send(
                    APIRequest(
                        method: .post, path: "/trains",
                        body: .raw(.data(Data("{".utf8)), contentType: "application/json")))
            }
            #expect(malformed.code == .httpStatus)
            #expect(malformed.statusCode == 400)
        }
    }

    @Test("a response read without throwing carries its status and errors (ApiModel's response.errors)")
    func responseErrors() async throws {
        try await withHarness { harness in
            let api = APIClient(configuration: .init(baseURL: harness.server.baseURL, retryPolicy: .none))
            let options = RequestOptions(validatesStatus: false)
            let refused = try await api.send(
                APIRequest(
                    method: .post, path: "/trains", body: .json(["number_of_cars": 3]), bodyRoot: "train",
                    options: options))
            #expect(!refused.isSuccessful)
            #expect(refused.statusCode == 422)
            #expect(refused.errors["company"] == ["can't be blank"])

            let missing = try await api.send(APIRequest(method: .get, path: "/trains/999999", options: options))
            #expect(missing.statusCode == 404)
            #expect(missing.errors.isEmpty)

            let found = try await api.send(APIRequest(method: .get, path: "/trains/1", options: options))
            #expect(found.isSuccessful)
            #expect(found.errors.isEmpty)
            #expect(found.dictionary?["train"]?["id"] == .int(1))

            // Asked to throw (the default), the same refusal throws.
            let error = try await #require(throws: APIError.self) {
                try await api.send(
                    APIRequest(method: .post, path: "/trains", body: .json(["number_of_cars": 3]), bodyRoot: "train"))
            }
            #expect(error.code == .validationFailed)
        }
    }
}
