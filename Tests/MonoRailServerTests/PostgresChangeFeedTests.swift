import Foundation
import MonoRail
import MonoRailServer
import MonoRailServerPostgres
import MonoRailTesting
import MonoRailTransport
import Testing

/// The reference server's change feed on PostgreSQL, with `monorail serve` run twice on one
/// database.
@Suite("Change feed on PostgreSQL across nodes", .timeLimit(.minutes(5)))
struct PostgresChangeFeedTests {
    /// Two `monorail serve` processes on a new database, and a client of each.
    func withTwoNodes(_ body: (PostgresLocation, APIClient, APIClient) async throws -> Void) async throws {
        let location = try await PostgresTestDatabase.make()
        let url = "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)"
        let (first, firstClient, _) = try await launchServe(["--database", url])
        defer { first.terminate() }
        let (second, secondClient, _) = try await launchServe(["--database", url])
        defer { second.terminate() }
        try await body(location, firstClient, secondClient)
    }

    @Test(
        "two serve processes on one database, writes on both, consumers on each: every change once, in commit order")
    func twoNodes() async throws {
        try await withTwoNodes { location, firstClient, secondClient in
            let nodes = [firstClient, secondClient]

            // From the log's beginning on each node, then two more "from now" once writes are under way.
            var consumers = nodes.map { ChangeStreamReader($0, fromStart: true) }
            let writers = (0..<4).map { writer in
                Task {
                    let client = nodes[writer % 2]
                    for index in 0..<75 {
                        let created: JSONValue = try await client.post(
                            "/trains", body: ["company": .string("W\(writer)-\(index)")] as JSONValue, root: "train")
                        let id = try #require(created["id"]?.intValue)
                        // Written through the other node: its change is as much the log's as this one's.
                        let other = nodes[(writer + 1) % 2]
                        let _: JSONValue = try await other.patch(
                            "/trains/\(id)", body: ["max_speed": .double(Double(index))] as JSONValue, root: "train")
                        if index % 5 == 0 { _ = try await client.delete("/trains/\(id)") }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            consumers += nodes.map { ChangeStreamReader($0, fromStart: false) }
            for writer in writers { try await writer.value }

            let store = try RecordStore(schema: .trains, location: location)
            defer { store.close() }
            let log = try store.changes(after: 0, limit: 10_000).map(\.id)
            #expect(log.count == 4 * (75 * 2 + 15))
            let newest = try #require(log.last)
            for (position, consumer) in consumers.enumerated() {
                let caughtUp = try await eventually(within: .seconds(30)) { consumer.seen.last == newest }
                #expect(caughtUp, "consumer \(position) stopped at \(consumer.seen.last ?? 0) of \(newest)")
                let start = consumer.start.withLock { $0 } ?? 0
                // Every change after where it began, each once, in the log's order: none skipped because
                // it committed after a later id was read, none repeated.
                let (seen, expected) = (consumer.seen, log.filter { $0 > start })
                let missing = Set(expected).subtracting(seen).sorted()
                let isExact = seen == expected
                #expect(
                    isExact,
                    "consumer \(position) from \(start): \(missing.count) missing (\(missing.prefix(8))…), \(seen.count - Set(seen).count) repeated"
                )
                consumer.task.cancel()
            }
            #expect(consumers[2].start.withLock { $0 } != nil)
            #expect(consumers[3].start.withLock { $0 } != nil)
        }
    }

    @Test(
        "every connection closed by the database, as a restart does: the next write goes through, and a stream on the other node gets it with no heartbeat's wait"
    )
    func connectionsLost() async throws {
        try await withTwoNodes { location, firstClient, secondClient in
            let consumer = ChangeStreamReader(firstClient, fromStart: false)
            defer { consumer.task.cancel() }
            #expect(try await eventually { consumer.start.withLock { $0 } != nil })
            let _: JSONValue = try await secondClient.post(
                "/trains", body: ["company": "Before"] as JSONValue, root: "train")
            #expect(try await eventually { consumer.seen.count == 1 })

            try await PostgresTestDatabase.closeEveryConnection(to: location)
            try await Task.sleep(for: .milliseconds(300))
            // Both nodes' pooled connections are closed: a request finds out, and uses a new one.
            let after: JSONValue = try await secondClient.post(
                "/trains", body: ["company": "After"] as JSONValue, root: "train")
            #expect(after["company"] == "After")
            let listed: JSONValue = try await firstClient.get("/trains", root: "trains")
            #expect(listed.arrayValue?.count == 4)
            // The first node's listener connects again and catches up; heartbeats are 15 seconds apart.
            #expect(try await eventually(within: .seconds(10)) { consumer.seen.count == 2 })
        }
    }

    @Test("the same Idempotency-Key sent to both nodes at once: one write, the same answer on both")
    func keyOnBothNodes() async throws {
        try await withTwoNodes { location, firstClient, secondClient in
            let answers = try await withThrowingTaskGroup(of: (Int, Int, JSONValue?).self) { group in
                for index in 0..<20 {
                    for client in [firstClient, secondClient] {
                        group.addTask {
                            let (status, body, _) = try await IdempotencyKeyTests.send(
                                client, .post, "/trains", body: ["company": .string("Once \(index)")],
                                headers: IdempotencyKeyTests.keyed("key-\(index)"))
                            return (index, status, body)
                        }
                    }
                }
                return try await group.reduce(into: [Int: [(Int, JSONValue?)]]()) {
                    $0[$1.0, default: []].append(($1.1, $1.2))
                }
            }
            for (index, pair) in answers.sorted(by: { $0.key < $1.key }) {
                // The node that lost the race waited for the other's commit, and answered from its entry.
                #expect(pair.map(\.0) == [201, 201], "key \(index)")
                #expect(Set(pair.compactMap { $0.1?["train"]?["id"] }).count == 1, "key \(index)")
            }
            let store = try RecordStore(schema: .trains, location: location)
            defer { store.close() }
            let trains = try #require(store.schema.resource(plural: "trains"))
            #expect(try store.list(trains, filters: [:]).total == 2 + 20)
            #expect(try store.idempotencyLedger().count == 20)
        }
    }
}
