import Foundation
import MonoRail
import TestServer

/// A canned server and a store pointed at it.
func withCanned(
    conventions: ServerConventions = .rails,
    _ body: (CannedServer, ResourceStore) async throws -> Void
) async throws {
    let server = try await CannedServer.start()
    var configuration = MonoRail.Configuration.testing(server.baseURL)
    configuration.conventions = conventions
    let store = ResourceStore(configuration: configuration)
    do {
        try await body(server, store)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// Parses a request body the canned server recorded (`"POST /trains {…}"`).
func recordedBody(_ line: String) throws -> JSONValue {
    guard let brace = line.firstIndex(of: "{") else { return .null }
    return try JSONParser().parse(Data(line[brace...].utf8))
}
