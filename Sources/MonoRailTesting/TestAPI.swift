public import Foundation
public import MonoRail
public import MonoRailServer

/// A reference server serving on a free loopback port, and a store of the test's own pointed at it.
///
/// Made by ``withReferenceServer(schema:configuration:store:_:)``; each test gets its own, so tests
/// run in parallel without sharing an identity map, a record cache or an outbox.
public struct TestAPI: Sendable {
    /// The server: its records (`server.store`), its journal and its refusals.
    public let server: RunningReferenceServer
    /// A store pointed at the server, with no retries: a failure shows at once.
    public let store: ResourceStore

    /// Every request the server received, as it arrived.
    public var journal: RequestJournal { server.journal }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { server.baseURL }
}

/// Runs `body` against a reference server serving `schema` on a free port, then stops the server.
///
/// ```swift
/// try await withReferenceServer(schema: .trains) { api in
///     let train = try await Train.get(id: 1, in: api.store)
///     #expect(api.journal.entries.last == "GET /trains/1")
/// }
/// ```
///
/// The store is configured for tests (`retryPolicy: .none`) and then by `configure`. How many of
/// these serve at once in one test process is bounded (two per core, or `MONORAIL_TEST_SERVERS`),
/// so a test suite holds on a busy machine; a server started inside another's `body` shares its slot.
///
/// - Parameters:
///   - schema: The resources to serve, with their seed records.
///   - configuration: The server's envelope, paging, token and faults; its port is always a free one.
///   - configure: Changes to the store's configuration, such as ``/MonoRail/MonoRail/Configuration/conventions``.
///   - body: The test.
/// - Returns: What `body` returns.
/// - Throws: What starting the server or `body` throws; the server is stopped either way.
@discardableResult
public func withReferenceServer<Result>(
    schema: ServerSchema,
    configuration: ReferenceServer.Configuration = .init(),
    store configure: (inout MonoRail.Configuration) -> Void = { _ in },
    _ body: (TestAPI) async throws -> Result
) async throws -> Result {
    try await ServerSlots.withSlot {
        var serverConfiguration = configuration
        serverConfiguration.port = 0
        let server = try await ReferenceServer(schema: schema, configuration: serverConfiguration).start()
        var storeConfiguration = MonoRail.Configuration.testing(apiRootURL: server.baseURL)
        configure(&storeConfiguration)
        let api = TestAPI(server: server, store: ResourceStore(configuration: storeConfiguration))
        do {
            let result = try await body(api)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

extension MonoRail.Configuration {
    /// A store configuration for tests: the API at `apiRootURL` and no retries, so a failure shows
    /// at once. The configuration ``withReferenceServer(schema:configuration:store:_:)`` starts from.
    public static func testing(apiRootURL: URL?) -> MonoRail.Configuration {
        MonoRail.Configuration(apiRootURL: apiRootURL, retryPolicy: .none)
    }
}
