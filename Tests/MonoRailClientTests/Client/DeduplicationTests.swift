import Foundation
import MonoRail
import MonoRailTesting
import TestServer
import Testing

@Suite("Request de-duplication", .timeLimit(.minutes(5)))
struct DeduplicationTests {
    @Test("concurrent identical GETs share one request")
    func shared() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let key = "dedupe-\(UUID().uuidString)"
        let results = try await withThrowingTaskGroup(of: JSONValue.self) { group in
            for _ in 0..<50 {
                group.addTask { try await client.get("/count/\(key)?delay_ms=1000") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0["count"] == 1 })
        #expect(server.count(key) == 1)
        #expect(client.requestsInFlight == 0)
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

    @Test("a cancelled waiter stops waiting and the shared request carries on")
    func waiterCancelled() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let key = "cancel-waiter-\(UUID().uuidString)"
        let owner = Task { try await client.get("/count/\(key)?delay_ms=500", as: JSONValue.self) }
        #expect(try await eventually { server.count(key) == 1 })
        let waiter = Task { try await client.get("/count/\(key)?delay_ms=500", as: JSONValue.self) }
        #expect(try await eventually { client.requestsInFlight == 1 })
        waiter.cancel()
        let waiterResult = await waiter.result
        #expect(throws: APIError.self) { try waiterResult.get() }
        #expect(try await owner.value["count"] == 1)
        #expect(server.count(key) == 1)
    }

    @Test("when the caller that owns the request is cancelled, the others run it again")
    func ownerCancelled() async throws {
        let server = try await TestServer.shared()
        let client = makeClient(server)
        let key = "cancel-owner-\(UUID().uuidString)"
        let owner = Task { try await client.get("/count/\(key)?delay_ms=2000", as: JSONValue.self) }
        #expect(try await eventually { server.count(key) == 1 })
        let waiter = Task { try await client.get("/count/\(key)?delay_ms=2000", as: JSONValue.self) }
        try await Task.sleep(for: .milliseconds(50))
        owner.cancel()
        let ownerResult = await owner.result
        guard case .failure(let error as APIError) = ownerResult else {
            Issue.record("expected the owner to be cancelled, got \(ownerResult)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(try await waiter.value["count"] == 2, "the waiter ran the request itself")
        #expect(server.count(key) == 2)
    }
}
