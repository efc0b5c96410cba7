import Foundation
import MonoRail
import MonoRailTesting
import TestServer
import Testing

struct Gist: Decodable, Sendable, Equatable {
    var id: Int
    var occupancy: Int
}

struct GistsRepository: Repository {
    let client: APIClient

    func gist(_ body: String) -> RequestHandle<Gist> {
        request(.get, "/respond?body=\(verbatim: q(body))", root: "car")
    }

    func slow(_ key: String) -> RequestHandle<Data> {
        request(.get, "/stream/\(key)?chunks=100&interval_ms=50")
    }

    func echo(_ body: JSONValue, completion: @escaping @Sendable (Result<Echo, APIError>) -> Void) -> RequestHandle<
        Echo
    > {
        request(.post, "/echo", body: body, completion: completion)
    }
}

@Suite("Repositories", .timeLimit(.minutes(5)))
struct RepositoryTests {
    @Test("an endpoint returns a handle whose value is the decoded result")
    func handleValue() async throws {
        let server = try await TestServer.shared()
        let repository = GistsRepository(client: makeClient(server))
        let gist = try await repository.gist(#"{"car": {"id": 3, "occupancy": 9}}"#).value
        #expect(gist == Gist(id: 3, occupancy: 9))
    }

    @Test("cancelling a handle stops the request and reports cancelled")
    func cancel() async throws {
        let server = try await TestServer.shared()
        let repository = GistsRepository(client: makeClient(server))
        let key = "repo-\(UUID().uuidString)"
        let handle = repository.slow(key)
        #expect(try await eventually { server.count(key) == 1 })
        handle.cancel()
        #expect(handle.isCancelled)
        let error = await #expect(throws: APIError.self) { try await handle.value }
        #expect(error?.code == .cancelled)
        #expect(try await eventually { server.wasAborted(key) }, "the server saw the request stop")
    }

    @Test("the completion style delivers a result")
    func completion() async throws {
        let server = try await TestServer.shared()
        let repository = GistsRepository(client: makeClient(server))
        let delivered = Locked<Result<Echo, APIError>?>(nil)
        _ = repository.echo(["title": "hello"]) { result in delivered.withLock { $0 = result } }
        #expect(try await eventually { delivered.withLock { $0 != nil } })
        let echo = try delivered.withLock { try $0?.get() }
        #expect(echo?.bodyJSON == ["title": "hello"])
    }
}
