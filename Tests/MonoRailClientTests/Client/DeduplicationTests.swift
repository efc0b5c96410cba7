import Foundation
import MonoRail
import TestServer
import Testing

@Suite("Request de-duplication", .timeLimit(.minutes(1)))
struct DeduplicationTests {
    @Test("concurrent identical GETs share one request")
    func shared() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let key = "dedupe-\(UUID().uuidString)"
        let results = try await withThrowingTaskGroup(of: JSONValue.self) { group in
            for _ in 0..<50 {
                group.addTask { try await client.get("/count/\(key)?delay_ms=300") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0["count"] == 1 })
        #expect(server.count(key) == 1)
        #expect(await client.requestsInFlight == 0)
    }

    @Test("each call can opt out")
    func optOut() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let key = "nodedupe-\(UUID().uuidString)"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let _: JSONValue = try await client.get(
                        "/count/\(key)?delay_ms=200", options: RequestOptions(deduplicates: false))
                }
            }
            try await group.waitForAll()
        }
        #expect(server.count(key) == 5)
    }

    @Test("requests with different headers are never merged")
    func differentUsers() async throws {
        let server = try await TestServer.shared()
        let key = "users-\(UUID().uuidString)"
        let client = makeClient(server)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in ["alice", "bob"] {
                group.addTask {
                    var request = APIRequest(method: .get, path: "/count/\(key)?delay_ms=200")
                    request.headers[.cookie] = "user=\(user)"
                    _ = try await client.send(request)
                }
            }
            try await group.waitForAll()
        }
        #expect(server.count(key) == 2)
    }

    @Test("one cancelled caller does not cancel the others' shared request")
    func cancellationIsPerCaller() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let key = "cancel-share-\(UUID().uuidString)"
        let survivor = Task { try await client.get("/count/\(key)?delay_ms=500", as: JSONValue.self) }
        let quitter = Task { try await client.get("/count/\(key)?delay_ms=500", as: JSONValue.self) }
        try await Task.sleep(for: .milliseconds(100))
        quitter.cancel()
        let value = try await survivor.value
        #expect(value["count"] == 1)
        #expect(server.count(key) == 1)
    }
}
