import Foundation
import MonoRail
import MonoRailTesting

/// `withScriptedServer` over the transport under test, with the server conventions given.
func withCanned(
    conventions: ServerConventions = .rails,
    _ body: (ScriptedServer, ResourceStore) async throws -> Void
) async throws {
    try await withScriptedServer {
        $0.transport = transportUnderTest
        $0.conventions = conventions
    } _: { server, store in
        try await body(server, store)
    }
}

/// Parses a request body the scripted server recorded (`"POST /trains {…}"`).
func recordedBody(_ line: String) throws -> JSONValue {
    guard let brace = line.firstIndex(of: "{") else { return .null }
    return try JSONParser().parse(Data(line[brace...].utf8))
}
