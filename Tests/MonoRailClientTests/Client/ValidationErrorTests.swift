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

    @Test("FastAPI's detail list: loc without its body/query part, nested and indexed locs dotted, repeats merged")
    func fastAPIDetails() throws {
        let body: JSONValue = [
            "detail": [
                ["type": "missing", "loc": ["body", "title"], "msg": "Field required", "input": [:]],
                [
                    "type": "greater_than", "loc": ["body", "dimensions", "width"],
                    "msg": "Input should be greater than 0",
                ],
                ["type": "string_type", "loc": ["body", "tags", 1], "msg": "Input should be a valid string"],
                ["type": "int_parsing", "loc": ["query", "limit"], "msg": "Input should be a valid integer"],
                ["type": "too_short", "loc": ["body", "title"], "msg": "String should have at least 1 character"],
                ["type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error"],
                ["type": "model_type", "loc": ["body"], "msg": "Input should be an object"],
            ]
        ]
        let errors = try #require(ValidationErrors.parse(body, allowsBareFields: false))
        #expect(errors["title"] == ["Field required", "String should have at least 1 character"])
        #expect(errors["dimensions.width"] == ["Input should be greater than 0"])
        #expect(errors["tags.1"] == ["Input should be a valid string"])
        #expect(errors["limit"] == ["Input should be a valid integer"])
        #expect(errors["0"] == ["JSON decode error"])
        #expect(errors[ValidationErrors.baseField] == ["Input should be an object"])
        #expect(errors.fields.map(\.field) == ["title", "dimensions.width", "tags.1", "limit", "0", "base"])
        // Not FastAPI's shape: an item without a loc or a msg, or a loc of other values.
        #expect(ValidationErrors.parse(["detail": [["msg": "no loc"]]], allowsBareFields: false) == nil)
        #expect(ValidationErrors.parse(["detail": [["loc": ["body", "a"]]]], allowsBareFields: false) == nil)
        #expect(ValidationErrors.parse(["detail": [["loc": [["x": 1]], "msg": "?"]]], allowsBareFields: false) == nil)
        #expect(ValidationErrors.parse(["detail": []], allowsBareFields: false) == nil)
    }

    @Test(
        "the reason a body gives ends the message, and 401 and 403 have their own codes",
        arguments: [
            (401, #"{"detail": "Not authenticated"}"#, APIError.Code.unauthorized, ": Not authenticated"),
            (
                403, #"{"type": "about:blank", "title": "Forbidden", "detail": "Not your train"}"#, .forbidden,
                ": Not your train"
            ),
            (404, #"{"message": "Cannot GET /trains/9", "statusCode": 404}"#, .httpStatus, ": Cannot GET /trains/9"),
            (409, #"{"error": {"message": "Version mismatch", "code": 7}}"#, .httpStatus, ": Version mismatch"),
            (500, #"{"error": "boom"}"#, .httpStatus, ": boom"),
            (503, #"{"title": "Down for maintenance"}"#, .httpStatus, ": Down for maintenance"),
            (401, #"{"detail": ["not", "a", "string"]}"#, .unauthorized, "Unauthorized"),
            (400, #"{"detail": "   "}"#, .httpStatus, "Bad Request"),
            (418, "teapot", .httpStatus, "418 I'm a teapot"),
        ])
    func reasons(status: Int, body: String, code: APIError.Code, ending: String) async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: APIError.self) {
            try await makeClient(server).get("/respond?status=\(status)&body=\(verbatim: q(body))", as: JSONValue.self)
        }
        #expect(error?.code == code)
        #expect(error?.statusCode == status)
        #expect(error?.message.hasSuffix(ending) == true, "\(error?.message ?? "")")
    }

    @Test("a long reason is cut")
    func longReason() throws {
        let reason = try #require(APIError.reason(in: ["detail": .string(String(repeating: "a", count: 1000))]))
        #expect(reason.count == APIError.maximumReasonLength + 1)
        #expect(reason.hasSuffix("…"))
    }
}
