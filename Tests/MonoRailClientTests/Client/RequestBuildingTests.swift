import Foundation
import MonoRail
import TestServer
import Testing

@Suite("Request building", .timeLimit(.minutes(5)))
struct RequestBuildingTests {
    @Test(
        "joins paths to a base URL that has a path of its own",
        arguments: [
            ("http://127.0.0.1:3000", "/trains", "http://127.0.0.1:3000/trains"),
            ("http://127.0.0.1:3000/", "/trains", "http://127.0.0.1:3000/trains"),
            ("http://127.0.0.1:3000/api/v1", "/trains", "http://127.0.0.1:3000/api/v1/trains"),
            ("http://127.0.0.1:3000/api/v1/", "trains", "http://127.0.0.1:3000/api/v1/trains"),
            ("https://example.com/api", "/posts.json?page=2", "https://example.com/api/posts.json?page=2"),
            ("http://127.0.0.1:3000/api", "https://other.example/x", "https://other.example/x"),
            // An absolute link, as DRF's `next`: its trailing slash and encoding stay as sent.
            ("http://127.0.0.1:3000", "http://127.0.0.1:8000/trains/?page=2", "http://127.0.0.1:8000/trains/?page=2"),
            ("http://127.0.0.1:3000", "http://127.0.0.1:8000/a%20b/?q=1", "http://127.0.0.1:8000/a%20b/?q=1"),
        ])
    func joinsBaseURL(base: String, path: String, expected: String) throws {
        let client = APIClient(baseURL: try #require(URL(string: base)))
        #expect(try client.url(for: APIPath(verbatim: path)).absoluteString == expected)
    }

    @Test("nests query parameters the Rails way")
    func railsQuery() {
        let query = QueryEncoder.encode([
            "train": ["company": "DB & Co", "tags": ["a", "b"]], "page": 2, "fast": true, "none": nil,
            "cars": [["occupancy": 1]],
        ])
        #expect(
            query
                == "cars%5B%5D%5Boccupancy%5D=1&fast=true&none=&page=2&train%5Bcompany%5D=DB%20%26%20Co&train%5Btags%5D%5B%5D=a&train%5Btags%5D%5B%5D=b"
        )
    }

    @Test("the server sees the nested parameters as Rails would")
    func queryOverTheWire() async throws {
        let server = try await TestServer.shared()
        let echo: Echo = try await makeClient(server).get(
            "/echo", parameters: ["a": ["b": 1], "tags": ["x", "y z"], "q": "ü?&="])
        #expect(echo.query["a[b]"] == "1")
        #expect(echo.query["tags[]"] == ["x", "y z"])
        #expect(echo.query["q"] == "ü?&=")
    }

    @Test(
        "percent-encodes ids so they can never leave the resource's path",
        arguments: ["a/b", "..", ".", "../admin", "a?b=c", "a#b", "with space", "Zürich", "日本", "%2F", "a+b"])
    func idsStayInTheirSegment(id: String) async throws {
        let server = try await TestServer.shared()
        struct Shown: Decodable {
            var id: String
            var rawPath: String
        }
        let shown: Shown = try await makeClient(server).get("/trains/\(id)", root: "train")
        #expect(shown.id == id, "the server's router must see exactly one segment holding the id")
        #expect(shown.rawPath.hasPrefix("/trains/"))
        let nested: JSONValue = try await makeClient(server).get("/trains/\(id)/cars")
        #expect(nested["id"] == .string(id))
    }

    @Test("path segments built from a list are encoded one by one")
    func segments() {
        #expect(APIPath(segments: ["trains", 42, "a/b"]).encoded == "/trains/42/a%2Fb")
        #expect(APIPath(segments: ["..", "x"]).encoded == "/%2E%2E/x")
    }

    @Test("sends JSON bodies with snake_case keys, wrapped in the root")
    func jsonBody() async throws {
        struct NewTrain: Encodable, Sendable {
            var company: String
            var maxSpeed: Double
            var builtAt: Date
        }
        let server = try await TestServer.shared()
        let echo: Echo = try await makeClient(server).post(
            "/echo", body: NewTrain(company: "DB", maxSpeed: 46.8, builtAt: Date(timeIntervalSince1970: 0)), root: nil)
        #expect(echo.method == "POST")
        #expect(echo.headers["content-type"] == "application/json")
        #expect(echo.headers["accept"] == "application/json")
        #expect(echo.bodyJSON == ["company": "DB", "max_speed": 46.8, "built_at": "1970-01-01T00:00:00.000Z"])

        var request = APIRequest(
            method: .patch, path: "/echo",
            body: .encodable(NewTrain(company: "X", maxSpeed: 1, builtAt: Date(timeIntervalSince1970: 0))),
            bodyRoot: "train")
        request.headers[.init("X-Trace")!] = "1"
        let wrapped = try await makeClient(server).send(request).decode(Echo.self)
        #expect(wrapped.method == "PATCH")
        #expect(wrapped.bodyJSON?["train"]?["company"] == "X")
        #expect(wrapped.headers["x-trace"] == "1")
    }

    @Test("every verb reaches the server with its method")
    func verbs() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        #expect(try await client.get("/echo", as: Echo.self).method == "GET")
        #expect(try await client.post("/echo", body: ["a": 1] as JSONValue, as: Echo.self).method == "POST")
        #expect(try await client.put("/echo", body: ["a": 1] as JSONValue, as: Echo.self).method == "PUT")
        #expect(try await client.patch("/echo", body: ["a": 1] as JSONValue, as: Echo.self).method == "PATCH")
        let deleted = try await client.delete("/echo", parameters: ["soft": true])
        #expect(deleted.isSuccessful)
        #expect(try deleted.decode(Echo.self).method == "DELETE")
        #expect(try deleted.decode(Echo.self).rawQuery == "soft=true")
        #expect(deleted.dictionary?["method"] == "DELETE")
    }

    @Test("the raw response is available as JSON")
    func rawResponse() async throws {
        let server = try await TestServer.shared()
        let response = try await makeClient(server).send(
            APIRequest(method: .get, path: "/respond?body=\(verbatim: q("[1,2]"))"))
        #expect(response.statusCode == 200)
        #expect(response.array == [1, 2])
        #expect(try response.json() == [1, 2])
    }
}
