import Foundation
import HTTPTypes
import MonoRailTransport
import TestServer
import Testing

/// Responses no HTTP server library would send, played byte for byte by a raw TCP server: each must
/// come back as a typed error, never a crash.
@Suite("Hostile responses", .timeLimit(.minutes(5)))
struct HostileResponseTests {
    static let chunkedBody = "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"

    /// The error a GET gets from a raw server playing `script`; records an issue when there is none.
    func failure(_ kind: TransportKind, playing script: [RawServer.Step]) async throws -> TransportError? {
        let server = try await RawServer.start(script)
        defer { Task { await server.stop() } }
        return await #expect(throws: TransportError.self) {
            try await kind.make().send(
                request(.get, server.baseURL, path: "/trains/1"), body: nil, metadata: RequestMetadata())
        }
    }

    @Test(
        "a status below 100 is an invalid response, not a crash",
        arguments: TransportKind.allCases, ["000 Zero", "099 Low", "042 Odd"])
    func statusBelow100(kind: TransportKind, status: String) async throws {
        let error = try await failure(kind, playing: [.send("HTTP/1.1 \(status)\r\n" + Self.chunkedBody), .close])
        #expect(error?.code == .invalidResponse, "\(String(reflecting: error))")
    }

    @Test("a status below 100 with a length-delimited body is refused too", arguments: TransportKind.allCases)
    func statusBelow100WithLength(kind: TransportKind) async throws {
        let error = try await failure(
            kind, playing: [.send("HTTP/1.1 000 Zero\r\nContent-Length: 2\r\n\r\n{}"), .close])
        #expect(error?.code == .invalidResponse, "\(String(reflecting: error))")
    }

    @Test("a reset in the middle of a body is a closed connection", arguments: TransportKind.allCases)
    func resetMidBody(kind: TransportKind) async throws {
        let error = try await failure(
            kind,
            playing: [
                .send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"id\": 1, "),
                .pause(milliseconds: 100), .reset,
            ])
        #expect(error?.code == .connectionClosed, "\(String(reflecting: error))")
    }

    @Test("a reset before any response is a closed connection", arguments: TransportKind.allCases)
    func resetBeforeResponse(kind: TransportKind) async throws {
        let error = try await failure(kind, playing: [.reset])
        #expect(error?.code == .connectionClosed, "\(String(reflecting: error))")
    }
}
