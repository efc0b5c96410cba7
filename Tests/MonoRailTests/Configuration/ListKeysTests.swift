import Foundation
import MonoRail
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Where a bare list's records sit when the body is an object around them.
@Suite("List keys", .timeLimit(.minutes(5)))
struct ListKeysTests {
    static let body = #"{"data": [{"id": 1, "company": "A"}, {"id": 2, "company": "B"}], "meta": {"total": 2}}"#

    @Test("a list under a key of conventions.listKeys is read; under another it is a decoding error, not an empty list")
    func listKeys() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains", body: Self.body)
            store.configure { $0.conventions = .fastAPI }
            let error = try await #require(throws: APIError.self) { try await Train.get(in: store) }
            #expect(error.code == .decodingFailed)
            store.configure { $0.conventions.listKeys.append("data") }
            let trains = try await Train.get(in: store)
            #expect(trains.map(\.company) == ["A", "B"])
        }
    }
}
