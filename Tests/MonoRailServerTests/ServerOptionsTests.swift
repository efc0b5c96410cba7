import Foundation
import MonoRail
import MonoRailServer
import TestServer
import Testing

@Suite("Reference server: options", .timeLimit(.minutes(5)))
struct ServerOptionsTests {
    @Test("pages with page and per_page, with Link and X-Total-Count")
    func pagination() async throws {
        try await withServer { _, client in
            for index in 0..<5 {
                let _: JSONValue = try await client.post(
                    "/trains", body: ["company": .string("P\(index)")] as JSONValue, root: "train")
            }
            let response = try await client.send(
                APIRequest(method: .get, path: "/trains", query: ["page": 2, "per_page": 3]))
            let page = try response.decode(JSONValue.self)["trains"]?.arrayValue ?? []
            #expect(page.compactMap { $0["id"]?.intValue } == [4, 5, 6])
            #expect(response.response.headerFields[.init("X-Total-Count")!] == "7")
            let link = try #require(response.response.headerFields[.init("Link")!])
            #expect(link.contains(#"</trains?page=1&per_page=3>; rel="first""#))
            #expect(link.contains(#"</trains?page=1&per_page=3>; rel="prev""#))
            #expect(link.contains(#"</trains?page=3&per_page=3>; rel="next""#))
            #expect(link.contains(#"</trains?page=3&per_page=3>; rel="last""#))
        }
    }

    @Test("GETs carry an ETag and If-None-Match gets 304 until the record changes")
    func etags() async throws {
        try await withServer { _, client in
            let first = try await client.send(APIRequest(method: .get, path: "/trains/1"))
            let etag = try #require(first.response.headerFields[.eTag])
            var conditional = APIRequest(method: .get, path: "/trains/1")
            conditional.headers[.ifNoneMatch] = etag
            // The answer a conditional request asks for: returned, not thrown.
            let notModified = try await client.send(conditional)
            #expect(notModified.statusCode == 304)
            #expect(notModified.body.isEmpty)
            // Without the validator, a 304 would be an error.
            #expect(notModified.request.headerFields[.ifNoneMatch] == etag)
            let _: JSONValue = try await client.patch(
                "/trains/1", body: ["max_speed": 99.0] as JSONValue, root: "train")
            let changed = try await client.send(conditional)
            #expect(changed.statusCode == 200)
            #expect(changed.response.headerFields[.eTag] != etag)
        }
    }

    @Test("side-loads related records beside the main one on ?include=")
    func sideloading() async throws {
        try await withServer { _, client in
            let envelope = try await client.envelope(
                APIRequest(
                    method: .get, path: "/trains/1", query: ["include": "cars,conductor,nothing"],
                    responseRoots: ["train"]),
                as: JSONValue.self)
            #expect(envelope.value["id"] == 1)
            #expect(envelope.sideloaded["cars"]?.arrayValue?.count == 2)
            #expect(envelope.sideloaded["conductors"]?[0]?["name"] == "Bill")
            #expect(envelope.sideloaded["nothing"] == nil)
            let cars = try await client.envelope(
                APIRequest(method: .get, path: "/cars", query: ["include": "train"], responseRoots: ["cars"]),
                as: [JSONValue].self)
            #expect(cars.sideloaded["trains"]?.arrayValue?.compactMap { $0["id"]?.intValue }.sorted() == [1, 2])
        }
    }

    @Test("a bearer token is required when configured")
    func auth() async throws {
        try await withServer(configuration: .init(bearerToken: "s3cret")) { running, client in
            let error = await #expect(throws: APIError.self) { let _: JSONValue = try await client.get("/trains/1") }
            #expect(error?.statusCode == 401)
            #expect(error?.data == ["error": "Unauthorized"])
            let authorized = client.configured { $0.middleware = [.headers([.authorization: "Bearer s3cret"])] }
            let train: JSONValue = try await authorized.get("/trains/1", root: "train")
            #expect(train["id"] == 1)
        }
    }

    @Test("Django REST framework style: bare bodies, trailing slashes, 400 validation errors")
    func bareEnvelope() async throws {
        try await withServer(configuration: .init(envelope: .bare)) { _, client in
            let train: JSONValue = try await client.get("/trains/1/")
            #expect(train["company"] == "MonoRail Co.")
            let trains: [JSONValue] = try await client.get("/trains/")
            #expect(trains.count == 2)
            let created: JSONValue = try await client.post("/trains/", body: ["company": "DRF"] as JSONValue)
            #expect(created["company"] == "DRF")
            let django = client.configured { $0.validationStatuses = [400, 422] }
            let error = await #expect(throws: APIError.self) {
                try await django.post("/trains/", body: ["company": ""] as JSONValue, as: JSONValue.self)
            }
            #expect(error?.statusCode == 400)
            #expect(error?.code == .validationFailed)
            #expect(error?.errors["company"] == ["can't be blank"])
        }
    }

    @Test("a root namespace wraps every body")
    func namespaceEnvelope() async throws {
        try await withServer(configuration: .init(envelope: .namespace("data"))) { _, client in
            let raw = try await client.send(APIRequest(method: .get, path: "/trains/1"))
            #expect(try raw.json()["data"]?["train"]?["id"] == 1)
            let namespaced = client.configured { $0.envelope.rootNamespace = "data" }
            let train: JSONValue = try await namespaced.get("/trains/1", root: "train")
            #expect(train["company"] == "MonoRail Co.")
        }
    }

    @Test("injected failures answer 503 with Retry-After, and a retrying client gets through")
    func failures() async throws {
        try await withServer(configuration: .init(faults: FaultInjection(failureRate: 1, retryAfter: 2))) { _, client in
            let error = await #expect(throws: APIError.self) { let _: JSONValue = try await client.get("/trains/1") }
            #expect(error?.statusCode == 503)
            #expect(error?.response?.headerFields[.retryAfter] == "2")
        }
        // Two failures, then answers: the client's retries (three attempts for a GET, waiting as
        // Retry-After says) get through; a client that does not retry does not.
        try await withServer(configuration: .init(faults: FaultInjection(retryAfter: 1, failFirst: 2))) {
            server, client in
            let refused = await #expect(throws: APIError.self) { let _: JSONValue = try await client.get("/trains/1") }
            #expect(refused?.statusCode == 503)
            let retrying = client.configured { $0.retryPolicy = .default }
            let train: JSONValue = try await retrying.get("/trains/1", root: "train")
            #expect(train["id"] == 1)
            #expect(server.journal.entries == ["GET /trains/1", "GET /trains/1", "GET /trains/1"])
        }
    }

    @Test("injected latency delays answers, and dropped connections are cut mid-body")
    func latencyAndDrops() async throws {
        try await withServer(configuration: .init(faults: FaultInjection(latency: .milliseconds(300)))) { _, client in
            let slow = client.configured { $0.timeout = .milliseconds(100) }
            let error = await #expect(throws: APIError.self) { let _: JSONValue = try await slow.get("/trains/1") }
            #expect(error?.code == .timedOut)
            let train: JSONValue = try await client.get("/trains/1", root: "train")
            #expect(train["id"] == 1)
        }
        try await withServer(configuration: .init(faults: FaultInjection(dropRate: 1))) { _, client in
            let error = await #expect(throws: APIError.self) { let _: JSONValue = try await client.get("/trains/1") }
            #expect(error?.code == .connectionClosed)
        }
    }

    @Test("fault settings are bounded")
    func bounds() {
        let faults = FaultInjection(
            latency: .seconds(600), failureRate: 7, failureStatus: 418, retryAfter: -5, dropRate: -1)
        #expect(faults.latency == .seconds(10))
        #expect(faults.failureRate == 1)
        #expect(faults.failureStatus == 503)
        #expect(faults.retryAfter == 0)
        #expect(faults.dropRate == 0)
    }

    @Test("CORS is off by default and on when asked")
    func cors() async throws {
        try await withServer { _, client in
            var request = APIRequest(method: .get, path: "/trains/1")
            request.headers[.origin] = "https://example.com"
            let response = try await client.send(request)
            #expect(response.response.headerFields[.accessControlAllowOrigin] == nil)
        }
        try await withServer(configuration: .init(allowsCORS: true)) { _, client in
            var request = APIRequest(method: .get, path: "/trains/1")
            request.headers[.origin] = "https://example.com"
            let response = try await client.send(request)
            #expect(response.response.headerFields[.accessControlAllowOrigin] == "*")
        }
    }
}
