import Foundation
import Logging
import MonoRail
import TestServer
import Testing

@Suite("Middleware", .timeLimit(.minutes(5)))
struct MiddlewareTests {
    @Test("default headers are added unless the request sets them")
    func defaultHeaders() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) {
            $0.middleware = [.headers([.init("X-App")!: "MonoRail", .userAgent: "MonoRail/1"])]
        }
        let echo: Echo = try await client.get("/echo")
        #expect(echo.headers["x-app"] == "MonoRail")
        #expect(echo.headers["user-agent"] == "MonoRail/1")
        var request = APIRequest(method: .get, path: "/echo")
        request.headers[.userAgent] = "Custom"
        #expect(try await client.send(request).decode(Echo.self).headers["user-agent"] == "Custom")
    }

    @Test("an anonymous request goes without default headers, middleware and the networking delegate")
    func anonymous() async throws {
        final class Delegate: NetworkingDelegate {
            func newResponse(headers: HTTPFields) {}
            func additionalHeaders() -> HTTPFields { [.cookie: "session=delegate"] }
            func additionalParameters() -> [String: JSONValue] { [:] }
        }
        let server = try await TestServer.shared()
        let client = makeClient(server) {
            $0.defaultHeaders = [.authorization: "Bearer app-token"]
            $0.middleware = [.headers([.init("X-App")!: "MonoRail"])]
            $0.networkingDelegate = Delegate()
        }
        let credited: Echo = try await client.get("/echo")
        #expect(credited.headers["authorization"] == "Bearer app-token")
        #expect(credited.headers["x-app"] == "MonoRail")
        #expect(credited.headers["cookie"] == "session=delegate")
        let request = APIRequest(method: .get, path: "/echo", options: RequestOptions(isAnonymous: true))
        let anonymous = try await client.send(request).decode(Echo.self)
        #expect(anonymous.headers["authorization"] == nil)
        #expect(anonymous.headers["x-app"] == nil)
        #expect(anonymous.headers["cookie"] == nil)
    }

    @Test("per-user headers are computed for every request")
    func perUserHeaders() async throws {
        let server = try await TestServer.shared()
        let currentUser = Locked<String>("alice")
        let client = makeClient(server) {
            $0.middleware = [.headers { [.cookie: "user=\(currentUser.withLock { $0 })"] }]
        }
        #expect(try await client.get("/echo", as: Echo.self).headers["cookie"] == "user=alice")
        currentUser.withLock { $0 = "bob" }
        #expect(try await client.get("/echo", as: Echo.self).headers["cookie"] == "user=bob")
    }

    @Test("default parameters are added and merged with the request's")
    func defaultParameters() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server) { $0.middleware = [.parameters(["locale": "de", "v": 2])] }
        let echo: Echo = try await client.get("/echo", parameters: ["v": 3, "q": "x"])
        #expect(echo.query["locale"] == "de")
        #expect(echo.query["v"] == "3", "the request's own value wins")
        #expect(echo.query["q"] == "x")
    }

    @Test("the networking delegate adds headers and parameters and sees every response's headers")
    func networkingDelegate() async throws {
        final class Delegate: NetworkingDelegate {
            let seen = Locked<[String]>([])
            func newResponse(headers: HTTPFields) {
                seen.withLock { $0.append(headers[.init("X-Token")!] ?? "-") }
            }
            func additionalHeaders() -> HTTPFields { [.authorization: "Bearer abc"] }
            func additionalParameters() -> [String: JSONValue] { ["api_version": 2] }
        }
        let server = try await TestServer.shared()
        let delegate = Delegate()
        let client = makeClient(server) {
            $0.middleware = [NetworkingDelegateMiddleware(delegate)]
            $0.retryPolicy = .none
        }
        let echo: Echo = try await client.get("/echo")
        #expect(echo.headers["authorization"] == "Bearer abc")
        #expect(echo.query["api_version"] == "2")
        _ = try? await client.send(
            APIRequest(method: .get, path: "/respond?status=500&header_name=X-Token&header_value=rotated"))
        #expect(delegate.seen.withLock { $0 } == ["-", "rotated"], "error responses are observed too")
    }

    @Test("before and after hooks run around each call, in order")
    func hooks() async throws {
        let server = try await TestServer.shared()
        let events = Locked<[String]>([])
        let client = makeClient(server) {
            $0.middleware = [
                .hooks(
                    before: { request in
                        events.withLock { $0.append("outer before") }
                        request.headerFields[.init("X-Login-Token")!] = "secret"
                    },
                    after: { _, response, _ in events.withLock { $0.append("outer after \(response.status.code)") } }),
                .hooks(
                    before: { _ in events.withLock { $0.append("inner before") } },
                    after: { request, _, _ in
                        events.withLock {
                            $0.append("inner after \(request.headerFields[.init("X-Login-Token")!] ?? "")")
                        }
                    }),
            ]
        }
        let echo: Echo = try await client.get("/echo")
        #expect(echo.headers["x-login-token"] == "secret")
        #expect(events.withLock { $0 } == ["outer before", "inner before", "inner after secret", "outer after 200"])
    }

    @Test("observers see status and headers")
    func observers() async throws {
        let server = try await TestServer.shared()
        let statuses = Locked<[Int]>([])
        let client = makeClient(server) {
            $0.middleware = [.observeResponses { response in statuses.withLock { $0.append(response.status.code) } }]
            $0.retryPolicy = .none
        }
        _ = try await client.get("/echo", as: Echo.self)
        _ = try? await client.get("/respond?status=404", as: Echo.self)
        #expect(statuses.withLock { $0 } == [200, 404])
    }

    @Test("requests are logged with method, URL, status and duration, and credentials are redacted")
    func logging() async throws {
        let server = try await TestServer.shared()
        let capture = LogCapture()
        let client = makeClient(server) {
            $0.logger = capture.logger()
            $0.requestLogLevel = .info
            $0.middleware = [.headers([.authorization: "Bearer top-secret", .cookie: "session=hunter2"])]
        }
        _ = try await client.get(
            "/echo", parameters: ["access_token": "tok123", "api_key": "k1", "page": 2], as: Echo.self)
        let records = capture.all
        let summary = try #require(records.first { $0.level == .info })
        #expect(summary.message.hasPrefix("GET http://127.0.0.1:\(server.port)/echo?"))
        #expect(summary.message.contains("→ 200"))
        #expect(summary.message.contains("ms)"))
        #expect(summary.message.contains("page=2"))
        #expect(summary.metadata["status"] == "200")
        #expect(summary.metadata["duration_ms"] != nil)
        let everything = records.map { $0.message + " " + $0.metadata.values.joined(separator: " ") }.joined(
            separator: "\n")
        for secret in ["tok123", "k1&", "top-secret", "hunter2"] {
            #expect(!everything.contains(secret), "\(secret) leaked into the log")
        }
        #expect(everything.contains("access_token=[REDACTED]"))
        #expect(everything.lowercased().contains("authorization: [redacted]"))
        #expect(everything.lowercased().contains("cookie: [redacted]"))
    }

    @Test("Set-Cookie in responses is redacted in the trace log")
    func setCookieRedacted() async throws {
        let server = try await TestServer.shared()
        let capture = LogCapture()
        let client = makeClient(server) { $0.logger = capture.logger() }
        _ = try await client.send(
            APIRequest(method: .get, path: "/respond?body=%7B%7D&header_name=Set-Cookie&header_value=sid%3Dabc"))
        let everything = capture.all.map { $0.metadata.values.joined(separator: " ") }.joined(separator: "\n")
        #expect(everything.lowercased().contains("set-cookie: [redacted]"))
        #expect(!everything.contains("sid=abc"))
    }

    @Test("nothing is logged below the configured level")
    func quietByDefault() async throws {
        let server = try await TestServer.shared()
        let capture = LogCapture()
        let client = makeClient(server) { $0.logger = capture.logger(level: .info) }
        _ = try await client.get("/echo", as: Echo.self)
        #expect(capture.all.isEmpty, "request logs default to .debug")
    }
}
