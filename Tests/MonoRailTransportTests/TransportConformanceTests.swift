import Foundation
import HTTPTypes
import MonoRailTesting
import MonoRailTransport
import TestServer
import Testing

@Suite("Transport conformance", .timeLimit(.minutes(5)))
struct TransportConformanceTests {
    @Test("a GET returns the status, the headers and the body", arguments: TransportKind.allCases)
    func getReturnsResponse(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let transport = kind.make()
        let (response, body) = try await transport.send(
            request(.get, server.baseURL, path: "/echo?a=1", headers: [.accept: "application/json"]),
            body: nil, metadata: RequestMetadata())
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentType]?.hasPrefix("application/json") == true)
        let echo = try json(body)
        #expect(echo["method"] as? String == "GET")
        #expect(echo["raw_query"] as? String == "a=1")
        #expect((echo["headers"] as? [String: Any])?["accept"] as? String == "application/json")
    }

    @Test("an error status is a response, not a thrown error", arguments: TransportKind.allCases)
    func errorStatusIsAResponse(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let (response, body) = try await kind.make().send(
            request(.get, server.baseURL, path: "/respond?status=503&body=down&content_type=text/plain"),
            body: nil, metadata: RequestMetadata())
        #expect(response.status.code == 503)
        #expect(String(decoding: body, as: UTF8.self) == "down")
    }

    @Test("a data body arrives byte for byte and reports upload progress", arguments: TransportKind.allCases)
    func dataBody(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let log = ProgressLog()
        let body = RequestBody.data(payload)
        #expect(body.isReplayable)
        let (response, data) = try await kind.make().send(
            request(.post, server.baseURL, path: "/echo", headers: [.contentType: "application/octet-stream"]),
            body: body, metadata: RequestMetadata(uploadProgress: { log.record($0) }))
        #expect(response.status == .ok)
        let echo = try json(data)
        #expect(echo["body_length"] as? Int == payload.count)
        #expect(echo["body_fnv1a"] as? String == fnv1a(payload))
        let reports = log.all
        #expect(reports.last?.completedBytes == Int64(payload.count))
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
    }

    @Test("a file body is streamed from disk with progress", arguments: TransportKind.allCases)
    func fileBody(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-\(UUID().uuidString).bin")
        let payload = randomData(count: 5 * 1024 * 1024)
        try payload.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let body = try RequestBody.file(at: url)
        #expect(body.length == Int64(payload.count))
        #expect(body.isReplayable)
        let log = ProgressLog()
        let (_, data) = try await kind.make().send(
            request(.put, server.baseURL, path: "/echo", headers: [.contentType: "application/octet-stream"]),
            body: body, metadata: RequestMetadata(uploadProgress: { log.record($0) }))
        let echo = try json(data)
        #expect(echo["body_length"] as? Int == payload.count)
        #expect(echo["body_fnv1a"] as? String == fnv1a(payload))
        #expect(log.all.count > 1)
        #expect(log.all.last?.completedBytes == Int64(payload.count))
    }

    @Test("a stream body is sent once and is not replayable", arguments: TransportKind.allCases)
    func streamBody(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        for index in 0..<10 { continuation.yield(Data(repeating: UInt8(index), count: 1000)) }
        continuation.finish()
        let body = RequestBody.stream(stream)
        #expect(!body.isReplayable)
        let (_, data) = try await kind.make().send(
            request(.post, server.baseURL, path: "/echo", headers: [.contentType: "application/octet-stream"]),
            body: body, metadata: RequestMetadata())
        #expect(try json(data)["body_length"] as? Int == 10_000)
    }

    @Test("download progress reaches the body's length", arguments: TransportKind.allCases)
    func downloadProgress(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let log = ProgressLog()
        let (_, data) = try await kind.make().send(
            request(.get, server.baseURL, path: "/big?bytes=2000000"), body: nil,
            metadata: RequestMetadata(downloadProgress: { log.record($0) }))
        #expect(data.count == 2_000_000)
        #expect(log.all.last?.completedBytes == 2_000_000)
        #expect(log.all.last?.fractionCompleted == 1)
    }

    @Test("a server slower than the timeout gives timedOut", arguments: TransportKind.allCases)
    func timeout(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: TransportError.self) {
            try await kind.make().send(
                request(.get, server.baseURL, path: "/respond?delay_ms=3000"), body: nil,
                metadata: RequestMetadata(timeout: .milliseconds(300)))
        }
        #expect(error?.code == .timedOut)
    }

    @Test("cancelling the task stops the request on the wire", arguments: TransportKind.allCases)
    func cancellation(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let key = "cancel-\(kind)-\(UUID().uuidString)"
        let transport = kind.make()
        let started = ProgressLog()
        let task = Task {
            try await transport.send(
                request(.get, server.baseURL, path: "/stream/\(key)?chunks=200&interval_ms=50"), body: nil,
                metadata: RequestMetadata(downloadProgress: { started.record($0) }))
        }
        #expect(try await eventually { !started.all.isEmpty })
        task.cancel()
        let result = await task.result
        #expect(throws: TransportError.self) { try result.get() }
        if case .failure(let error as TransportError) = result {
            #expect(error.code == .cancelled)
        }
        #expect(try await eventually { server.wasAborted(key) }, "the server saw the connection go away")
    }

    @Test("a refused connection gives cannotConnect", arguments: TransportKind.allCases)
    func cannotConnect(kind: TransportKind) async throws {
        let error = await #expect(throws: TransportError.self) {
            try await kind.make().send(
                HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:1", path: "/"), body: nil,
                metadata: RequestMetadata())
        }
        #expect(error?.code == .cannotConnect, "\(String(reflecting: error))")
    }

    @Test("a connection closed mid-body gives connectionClosed", arguments: TransportKind.allCases)
    func truncatedBody(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: TransportError.self) {
            try await kind.make().send(
                request(.get, server.baseURL, path: "/truncated?length=1000&sent=100"), body: nil,
                metadata: RequestMetadata())
        }
        #expect(error?.code == .connectionClosed, "\(String(reflecting: error))")
    }

    @Test("a body over the size limit gives responseTooLarge", arguments: TransportKind.allCases)
    func sizeLimit(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let error = await #expect(throws: TransportError.self) {
            try await kind.make().send(
                request(.get, server.baseURL, path: "/big?bytes=300000"), body: nil,
                metadata: RequestMetadata(maxResponseBodySize: 100_000))
        }
        #expect(error?.code == .responseTooLarge)
    }

    @Test("same-origin redirects keep credentials", arguments: TransportKind.allCases)
    func sameOriginRedirect(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let (response, data) = try await kind.make().send(
            request(
                .get, server.baseURL, path: "/redirect?to=/echo/landed", headers: [.authorization: "Bearer secret"]),
            body: nil, metadata: RequestMetadata())
        #expect(response.status == .ok)
        let echo = try json(data)
        #expect(echo["path"] as? String == "/echo/landed")
        #expect((echo["headers"] as? [String: Any])?["authorization"] as? String == "Bearer secret")
    }

    @Test("cross-origin redirects drop Authorization and Cookie", arguments: TransportKind.allCases)
    func crossOriginRedirect(kind: TransportKind) async throws {
        let server = try await TestServer.shared()
        let other = try await TestServer.other()
        let target = "http://127.0.0.1:\(other.port)/echo/elsewhere"
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        let (response, data) = try await kind.make().send(
            request(
                .get, server.baseURL, path: "/redirect?to=\(encoded)",
                headers: [.authorization: "Bearer secret", .cookie: "session=1", .accept: "application/json"]),
            body: nil, metadata: RequestMetadata())
        #expect(response.status == .ok)
        let echo = try json(data)
        #expect(echo["path"] as? String == "/echo/elsewhere")
        let headers = try #require(echo["headers"] as? [String: Any])
        #expect(headers["authorization"] == nil)
        #expect(headers["cookie"] == nil)
        #expect(headers["accept"] as? String == "application/json")
    }
}
