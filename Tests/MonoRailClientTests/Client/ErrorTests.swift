import Foundation
import MonoRail
import TestServer
import Testing

/// Every bad input the foundation issue lists, each asserting the exact typed error.
@Suite("Errors and bad input", .timeLimit(.minutes(5)))
struct ErrorTests {
    func respond(status: Int = 200, contentType: String = "application/json", body: String, extra: String = "")
        -> APIPath
    {
        "/respond?status=\(status)&content_type=\(verbatim: q(contentType))&body=\(verbatim: q(body))\(verbatim: extra)"
    }

    func failure(_ client: APIClient, _ path: APIPath, root: String? = "car") async -> APIError? {
        await #expect(throws: APIError.self) {
            let _: Car = try await client.get(path, root: root)
        }
    }

    @Test("a 404 carries status, domain, raw body and parsed body")
    func notFound() async throws {
        let server = try await TestServer.shared()
        let error = try #require(
            await failure(makeClient(server), respond(status: 404, body: #"{"error":"Not Found"}"#)))
        #expect(error.code == .httpStatus)
        #expect(error.statusCode == 404)
        #expect(error.domain == "Not Found")
        #expect(error.rawBody == Data(#"{"error":"Not Found"}"#.utf8))
        #expect(error.data == ["error": "Not Found"])
        #expect(error.request?.method == .get)
        #expect(APIError.Code.httpStatus ~= error)
    }

    @Test("a status without its reason phrase (HTTP/2, FoundationNetworking) still has its domain")
    func bareStatus() {
        let response = HTTPResponse(status: .init(code: 404))
        #expect(response.status.reasonPhrase.isEmpty)
        #expect(APIError(.httpStatus, "the server answered 404", response: response).domain == "Not Found")
        #expect(HTTPResponse.Status(code: 503).reasonPhraseOrStandard == "Service Unavailable")
        #expect(HTTPResponse.Status(code: 418, reasonPhrase: "Teapot").reasonPhraseOrStandard == "Teapot")
        #expect(HTTPResponse.Status(code: 599).reasonPhraseOrStandard == "")
    }

    @Test("an HTML error page with status 500 is an HTTP error with the raw page and no parsed body")
    func htmlError() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) { $0.retryPolicy = .none }
        let html = "<html><body><h1>Internal Server Error</h1></body></html>"
        let error = try #require(await failure(client, respond(status: 500, contentType: "text/html", body: html)))
        #expect(error.code == .httpStatus)
        #expect(error.statusCode == 500)
        #expect(error.domain == "Internal Server Error")
        #expect(error.rawBody.map { String(decoding: $0, as: UTF8.self) } == html)
        #expect(error.parsedBody == nil)
        #expect(error.isTransient)
    }

    @Test("malformed JSON is a decoding error pointing at the byte")
    func malformed() async throws {
        let server = try await TestServer.shared()
        let error = try #require(await failure(makeClient(server), respond(body: #"{"car": {"id": 1,}}"#)))
        #expect(error.code == .decodingFailed)
        #expect(error.message.contains("byte 17: expected a string key"))
        #expect(error.underlyingError is JSONSyntaxError)
    }

    @Test("a truncated JSON body is a decoding error")
    func truncatedJSON() async throws {
        let server = try await TestServer.shared()
        let error = try #require(await failure(makeClient(server), respond(body: #"{"car": {"id": 1, "occ"#)))
        #expect(error.code == .decodingFailed)
        #expect(error.underlyingError is JSONSyntaxError)
    }

    @Test("an empty body is a decoding error, unless nothing is expected")
    func emptyBody() async throws {
        let server = try await TestServer.shared()
        let error = try #require(await failure(makeClient(server), respond(body: "")))
        #expect(error.code == .decodingFailed)
        #expect(error.message.contains("empty"))
        let nothing: EmptyResponse = try await makeClient(server).get(respond(status: 204, body: ""))
        #expect(nothing == EmptyResponse())
    }

    @Test("a wrong content type is a decoding error naming it")
    func wrongContentType() async throws {
        let server = try await TestServer.shared()
        let error = try #require(
            await failure(
                makeClient(server), respond(contentType: "text/plain", body: #"{"car":{"id":1,"occupancy":2}}"#)))
        #expect(error.code == .decodingFailed)
        #expect(error.message.contains("text/plain"))
    }

    @Test("valid JSON of the wrong shape names the type, the key and the JSON path")
    func wrongShape() async throws {
        let server = try await TestServer.shared()
        let error = try #require(
            await failure(makeClient(server), respond(body: #"{"car": {"id": 1, "occupancy": "full"}}"#)))
        #expect(error.code == .decodingFailed)
        let detail = try #require(error.decodingFailure)
        #expect(detail.typeName == "Car")
        #expect(detail.key == "occupancy")
        #expect(detail.path == "$.car.occupancy")
        #expect(error.message.contains("$.car.occupancy"))

        let missing = try #require(await failure(makeClient(server), respond(body: #"{"car": {"id": 1}}"#)))
        #expect(missing.decodingFailure?.key == "occupancy")
        #expect(missing.decodingFailure?.path == "$.car.occupancy")

        let listError = await #expect(throws: APIError.self) {
            let _: [Car] = try await makeClient(server).get(
                respond(body: #"{"cars": [{"id": 1, "occupancy": 1}, {"id": 2, "occupancy": null}]}"#), root: "cars")
        }
        #expect(listError?.decodingFailure?.path == "$.cars[1].occupancy")
        #expect(listError?.decodingFailure?.typeName == "Array<Car>")
    }

    @Test("a 200 with an errors body is a validation failure")
    func okWithErrors() async throws {
        let server = try await TestServer.shared()
        let error = try #require(
            await failure(makeClient(server), respond(body: #"{"errors": {"company": ["can't be blank"]}}"#)))
        #expect(error.code == .validationFailed)
        #expect(error.statusCode == 200)
        #expect(error.errors["company"] == ["can't be blank"])
    }

    struct BadRequest: Sendable, CustomTestStringConvertible {
        var body: String
        var validationStatuses: Set<Int>
        var expected: APIError.Code
        var testDescription: String { "\(body) with \(validationStatuses.sorted())" }
    }

    @Test(
        "a 400 is validation errors when an errors member says so; bare fields only at the configured statuses",
        arguments: [
            BadRequest(
                body: #"{"car": {"errors": {"occupancy": ["is too high"]}}}"#, validationStatuses: [422],
                expected: .validationFailed),
            BadRequest(
                body: #"{"errors": {"occupancy": ["is too high"]}}"#, validationStatuses: [422],
                expected: .validationFailed),
            BadRequest(
                body: #"{"message": "occupancy is not a number"}"#, validationStatuses: [422], expected: .httpStatus),
            BadRequest(body: #"{"occupancy": ["is too high"]}"#, validationStatuses: [422], expected: .httpStatus),
            BadRequest(
                body: #"{"occupancy": ["is too high"]}"#, validationStatuses: [400, 422], expected: .validationFailed),
            BadRequest(
                body: #"{"error": "Bad Request", "message": "no"}"#, validationStatuses: [400, 422],
                expected: .httpStatus),
        ])
    func badRequest(_ row: BadRequest) async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) { $0.validationStatuses = row.validationStatuses }
        let error = try #require(await failure(client, respond(status: 400, body: row.body)))
        #expect(error.code == row.expected)
        #expect(error.statusCode == 400)
        if row.expected == .validationFailed { #expect(error.errors["occupancy"] == ["is too high"]) }
    }

    @Test("a connection closed mid-body is connectionClosed, after the retries allowed")
    func closedMidBody() async throws {
        let server = try await TestServer.shared()
        let clock = RecordingClock()
        let error = try #require(await failure(makeClient(server, clock: clock), "/truncated?length=500&sent=20"))
        #expect(error.code == .connectionClosed)
        #expect(clock.sleeps.count == 2, "a GET is retried twice on a lost connection")
    }

    @Test("a server slower than the timeout is timedOut")
    func slowServer() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) {
            $0.timeout = .milliseconds(200)
            $0.retryPolicy = .none
        }
        let error = try #require(await failure(client, respond(body: "{}", extra: "&delay_ms=2000")))
        #expect(error.code == .timedOut)
        #expect(APIError.Code.timedOut ~= error)
    }

    @Test("a refused connection is cannotConnect")
    func refused() async throws {
        let client = APIClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:1")!, transport: MonoRail.defaultTransport, retryPolicy: .none))
        let error = await #expect(throws: APIError.self) {
            let _: Car = try await client.get("/cars/1")
        }
        #expect(error?.code == .cannotConnect)
    }

    @Test("a body over the size limit is responseTooLarge")
    func tooLarge() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) { $0.maxResponseBodySize = 10_000 }
        let error = await #expect(throws: APIError.self) {
            let _: String = try await client.get("/big?bytes=50000")
        }
        #expect(error?.code == .responseTooLarge)
        let fits: String = try await client.get("/big?bytes=5000")
        #expect(fits.count == 4998)
    }

    @Test("cancelling the calling task gives cancelled")
    func cancelled() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let task = Task {
            let _: Car = try await client.get(respond(body: "{}", extra: "&delay_ms=5000"))
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let result = await task.result
        guard case .failure(let error as APIError) = result else {
            Issue.record("expected an APIError, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
    }

    @Test("an unencodable body is encodingFailed and nothing is sent")
    func encodingFailure() async throws {
        let server = try await TestServer.shared()
        let key = "never-\(UUID().uuidString)"
        let error = await #expect(throws: APIError.self) {
            try await makeClient(server).post("/count/\(key)", body: ["speed": Double.infinity], as: EmptyResponse.self)
        }
        #expect(error?.code == .encodingFailed)
        #expect(server.count(key) == 0)
    }

    @Test("the debug description carries the evidence")
    func debugDescription() async throws {
        let server = try await TestServer.shared()
        let error = try #require(
            await failure(makeClient(server), respond(status: 404, body: #"{"error":"Not Found"}"#)))
        let text = String(reflecting: error)
        #expect(text.contains("APIError.httpStatus"))
        #expect(text.contains("404 Not Found"))
        #expect(text.contains(#"{"error":"Not Found"}"#))
        #expect(text.contains("GET http://127.0.0.1:\(server.port)/respond"))
    }
}
