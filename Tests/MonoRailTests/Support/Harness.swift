import Foundation
import MonoRail
import MonoRailServer

/// A reference server on a free loopback port and a store of its own pointed at it, so that tests
/// run in parallel without sharing an identity map.
struct Harness {
    let server: RunningReferenceServer
    let store: ResourceStore

    var journal: RequestJournal { server.journal }
}

func withHarness(
    schema: ServerSchema = .trains,
    server serverConfiguration: ReferenceServer.Configuration = .init(),
    configure: (inout MonoRail.Configuration) -> Void = { _ in },
    _ body: (Harness) async throws -> Void
) async throws {
    var serverConfiguration = serverConfiguration
    serverConfiguration.port = 0
    let running = try await ReferenceServer(schema: schema, configuration: serverConfiguration).start()
    var configuration = MonoRail.Configuration.testing(running.baseURL)
    configure(&configuration)
    let harness = Harness(server: running, store: ResourceStore(configuration: configuration))
    do {
        try await body(harness)
    } catch {
        await running.stop()
        throw error
    }
    await running.stop()
}

/// The transport the model-layer tests talk over: the platform's default (AsyncHTTPClient on
/// Linux), or URLSession when `MONORAIL_TRANSPORT=urlsession` — `.ci/run` runs the tests both ways.
let transportUnderTest: (any Transport)? =
    ProcessInfo.processInfo.environment["MONORAIL_TRANSPORT"]?.lowercased() == "urlsession"
    ? URLSessionTransport.shared : nil

extension MonoRail.Configuration {
    /// A store configuration for tests: no retries, over ``transportUnderTest``.
    static func testing(_ apiRootURL: URL?) -> MonoRail.Configuration {
        var configuration = MonoRail.Configuration(apiRootURL: apiRootURL, retryPolicy: .none)
        configuration.transport = transportUnderTest
        return configuration
    }
}
