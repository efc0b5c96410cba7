import Foundation
import MonoRail
import TestServer
import Testing

@Suite("Validation errors", .timeLimit(.minutes(5)))
struct ValidationErrorTests {
    @Test(
        "reads the Rails, Django REST framework and ApiModel shapes",
        arguments: [
            #"{"errors": {"company": ["can't be blank"], "max_speed": ["must be less than 400"]}}"#,
            #"{"company": ["can't be blank"], "max_speed": ["must be less than 400"]}"#,
            #"{"train": {"errors": {"company": ["can't be blank"], "max_speed": ["must be less than 400"]}}}"#,
        ])
    func shapes(body: String) async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: APIError.self) {
            try await makeClient(server).post(
                "/respond?status=422&body=\(verbatim: q(body))", body: ["company": ""] as JSONValue, root: "train",
                as: EmptyResponse.self)
        }
        let validation = try #require(error)
        #expect(validation.code == .validationFailed)
        #expect(validation.statusCode == 422)
        #expect(validation.errors["company"] == ["can't be blank"])
        #expect(validation.errors["max_speed"] == ["must be less than 400"])
        #expect(validation.errors["maxSpeed"] == ["must be less than 400"])
        #expect(validation.errors["nothing"] == [])
        #expect(validation.errors.fullMessages == ["Company can't be blank", "Max speed must be less than 400"])
        #expect(validation.message.contains("Company can't be blank"))
    }

    @Test("Django REST framework answers 400; the preset status list makes that a validation failure")
    func djangoStatus() async throws {
        let server = try await TestServer.shared()
        let body = #"{"company": ["This field is required."], "non_field_errors": ["Duplicate."]}"#
        let client = makeClient(server) { $0.validationStatuses = [400, 422] }
        let error = await #expect(throws: APIError.self) {
            try await client.post(
                "/respond?status=400&body=\(verbatim: q(body))", body: ["a": 1] as JSONValue, as: EmptyResponse.self)
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.errors.fullMessages == ["Company: This field is required.", "Duplicate."])
        let plain = await #expect(throws: APIError.self) {
            try await makeClient(server).post(
                "/respond?status=400&body=\(verbatim: q(body))", body: ["a": 1] as JSONValue, as: EmptyResponse.self)
        }
        #expect(plain?.code == .httpStatus, "400 is not a validation status by default")
    }

    @Test("a 422 whose body is not recognisable stays an HTTP error")
    func unrecognised() async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: APIError.self) {
            try await makeClient(server).post(
                "/respond?status=422&body=\(verbatim: q("[1,2]"))", body: [1] as JSONValue, as: EmptyResponse.self)
        }
        #expect(error?.code == .httpStatus)
        #expect(error?.parsedBody == [1, 2])
    }

    @Test("parses messages as arrays, strings, nested objects and base errors")
    func parsing() throws {
        let errors = try #require(
            ValidationErrors.parse([
                "errors": ["name": "is taken", "depot": ["city": ["is unknown"]], "train_id": ["must exist"]]
            ]))
        #expect(errors["name"] == ["is taken"])
        #expect(errors["depot.city"] == ["is unknown"])
        #expect(errors.fullMessages == ["Depot city is unknown", "Name is taken", "Train must exist"])
        let base = try #require(ValidationErrors.parse(["errors": ["Record is locked"]]))
        #expect(base[ValidationErrors.baseField] == ["Record is locked"])
        #expect(base.fullMessages == ["Record is locked"])
        #expect(ValidationErrors.parse(["error": "Not Found"]) == nil)
        #expect(ValidationErrors.parse(["detail": "Authentication credentials were not provided."]) == nil)
        #expect(ValidationErrors.parse([1, 2]) == nil)
        #expect(ValidationErrors.parse(["count": 3]) == nil)
    }
}
