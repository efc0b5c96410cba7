import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting

/// `withReferenceServer` over the transport under test, serving the trains schema unless told.
func withHarness(
    schema: ServerSchema = .trains,
    server configuration: ReferenceServer.Configuration = .init(),
    configure: (inout MonoRail.Configuration) -> Void = { _ in },
    _ body: (TestAPI) async throws -> Void
) async throws {
    try await withReferenceServer(schema: schema, configuration: configuration) {
        $0.transport = transportUnderTest
        configure(&$0)
    } _: { api in
        try await body(api)
    }
}

/// The transport the model-layer tests talk over: the platform's default (AsyncHTTPClient on
/// Linux), or URLSession when `MONORAIL_TRANSPORT=urlsession` — `.ci/run` runs the tests both ways.
let transportUnderTest: (any Transport)? =
    ProcessInfo.processInfo.environment["MONORAIL_TRANSPORT"]?.lowercased() == "urlsession"
    ? URLSessionTransport.shared : nil

extension MonoRail.Configuration {
    /// A store configuration for tests: no retries, over ``transportUnderTest``.
    static func testing(_ apiRootURL: URL?) -> MonoRail.Configuration {
        var configuration = MonoRail.Configuration.testing(apiRootURL: apiRootURL)
        configuration.transport = transportUnderTest
        return configuration
    }
}
