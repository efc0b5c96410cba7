import Foundation
import MonoRail
import MonoRailTesting
import Testing

@Resource
final class Ticket {
    var seat: String?
}

@Suite("Scripted server", .timeLimit(.minutes(5)))
struct ScriptedServerTests {
    @Test("answers a scripted line as scripted, a line nobody scripted with a 404 naming it, and records both")
    func scriptedAndNot() async throws {
        try await withScriptedServer { server, store in
            server.respond(to: "GET /tickets/1", body: #"{"ticket": {"id": 1, "seat": "12A"}}"#)
            let ticket = try await Ticket.get(id: 1, in: store)
            #expect(ticket.seat == "12A")

            let error = await #expect(throws: APIError.self) { try await Ticket.get(id: 2, in: store) }
            #expect(error?.statusCode == 404)
            #expect(error?.parsedBody?["error"]?.stringValue == "not scripted: GET /tickets/2")
            #expect(server.requests == ["GET /tickets/1", "GET /tickets/2"])
        }
    }

    @Test("the store is the test's own, with no retries: a 503 is seen once")
    func noRetries() async throws {
        try await withScriptedServer { server, store in
            server.respond(to: "GET /tickets/1", status: 503, body: "{}")
            await #expect(throws: APIError.self) { try await Ticket.get(id: 1, in: store) }
            #expect(server.requests == ["GET /tickets/1"])
            #expect(store !== ResourceStore.default)
        }
    }
}
