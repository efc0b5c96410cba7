import BenchSupport
import Foundation
import MonoRail
import Synchronization

// The reference server's change feed under load: `writes` creates through every node at once (four
// writers), while a client of `GET /changes` on each node reads the stream, from the first write
// until every client has read every change. On PostgreSQL with two `RoundTripServer` processes on one
// database (`MONORAIL_BENCH_POSTGRES_URL`, a database the benchmark empties), against one process on
// SQLite.

/// A client of one node's change stream, counting the events it read.
final class FeedReader: Sendable {
    let count = Mutex(0)
    let opened = Mutex(false)

    func read(_ client: APIClient) async throws {
        let (_, body) = try await client.stream(APIRequest(method: .get, path: "/changes"))
        var parser = ServerSentEventParser(maxEventSize: 1 << 20)
        for try await chunk in body {
            for output in parser.parse(chunk) {
                switch output {
                case .event: count.withLock { $0 += 1 }
                case .lastEventID: opened.withLock { $0 = true }
                case .retry, .failure: continue
                }
            }
        }
    }
}

/// Changes committed and read by a client on every node, per second.
func feedThroughput(nodes: [ServerProcess], writes: Int) async throws -> Int {
    let clients = nodes.map {
        APIClient(configuration: .init(baseURL: $0.baseURL, transport: MonoRail.defaultTransport, retryPolicy: .none))
    }
    let readers = clients.map { _ in FeedReader() }
    let reading = zip(readers, clients).map { reader, client in Task { try await reader.read(client) } }
    defer { for task in reading { task.cancel() } }
    while readers.contains(where: { !$0.opened.withLock { $0 } }) { try await Task.sleep(for: .milliseconds(5)) }
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<4 {
            group.addTask {
                let client = clients[writer % clients.count]
                for index in 0..<(writes / 4) {
                    let _: JSONValue = try await client.post(
                        "/trains", body: ["company": .string("Feed \(writer)-\(index)")] as JSONValue, root: "train")
                }
            }
        }
        try await group.waitForAll()
    }
    while readers.contains(where: { $0.count.withLock { $0 } < writes }) {
        try await Task.sleep(for: .milliseconds(1))
    }
    let elapsed = clock.now - start
    return Int(Double(writes) / (Double(microseconds(elapsed)) / 1_000_000))
}

/// Empties the benchmark's PostgreSQL database: drops it and makes it again, through `psql` on the
/// server's own database.
func recreate(postgres url: String) throws {
    guard let components = URLComponents(string: url), let name = components.path.split(separator: "/").last else {
        throw ServerError("MONORAIL_BENCH_POSTGRES_URL is not a postgres:// URL with a database")
    }
    var admin = components
    admin.path = "/postgres"
    for statement in ["DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)", "CREATE DATABASE \"\(name)\""] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", admin.string ?? url, "-q", "-c", statement]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ServerError("psql failed: \(statement)") }
    }
}
