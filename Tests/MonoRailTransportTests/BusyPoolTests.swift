import Foundation
import HTTPTypes
import MonoRailAsyncHTTPClient
import MonoRailTransport
import TestServer
import Testing

@Suite("A busy connection pool", .timeLimit(.minutes(5)))
struct BusyPoolTests {
    /// AsyncHTTPClient fails a request that waits for a pooled connection longer than the connect
    /// timeout (10 s) as if the server could not be reached.
    @Test("requests past the pool's connections wait their turn for as long as their own timeout")
    func waitsPastConnectTimeout() async throws {
        // A server of its own, so its busy pool holds back no other test.
        let server = try await TestServer.start()
        let transport = AsyncHTTPClientTransport(configuration: .init(timeout: .seconds(60)))
        let key = "busy-\(UUID().uuidString)"
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            // 32 connections are busy for 11 s; the other 8 requests wait for them.
            for _ in 0..<40 {
                group.addTask {
                    let (response, _) = try await transport.send(
                        request(.get, server.baseURL, path: "/count/\(key)?delay_ms=11000"), body: nil,
                        metadata: RequestMetadata())
                    return response.status.code
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 40))
        #expect(server.count(key) == 40)
    }

    @Test("a request waiting for a connection still ends at its own timeout, and frees its place")
    func waitingRequestTimesOut() async throws {
        let server = try await TestServer.start()
        let slow = AsyncHTTPClientTransport(configuration: .init(timeout: .seconds(30)))
        let impatient = AsyncHTTPClientTransport(configuration: .init(timeout: .milliseconds(500)))
        let key = "held-\(UUID().uuidString)"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    _ = try await slow.send(
                        request(.get, server.baseURL, path: "/count/\(key)?delay_ms=3000"), body: nil,
                        metadata: RequestMetadata())
                }
            }
            // Let the 32 take every connection first.
            try await Task.sleep(for: .milliseconds(500))
            let error = await #expect(throws: TransportError.self) {
                _ = try await impatient.send(
                    request(.get, server.baseURL, path: "/count/\(key)-late?delay_ms=3000"), body: nil,
                    metadata: RequestMetadata())
            }
            #expect(error?.code == .timedOut)
            try await group.waitForAll()
        }
        // The abandoned wait left no place taken: a request now goes straight through.
        let (response, _) = try await slow.send(
            request(.get, server.baseURL, path: "/count/\(key)-after"), body: nil, metadata: RequestMetadata())
        #expect(response.status == .ok)
        #expect(server.count(key) == 32)
    }
}
