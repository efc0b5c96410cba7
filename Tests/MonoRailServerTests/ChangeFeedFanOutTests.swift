import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Testing

@testable import MonoRailServer

@Suite("Change feed: one read of the log for every stream", .timeLimit(.minutes(2)))
struct ChangeFeedFanOutTests {
    @Test("six streams of one server get every change, and the log is read once per commit, not once per stream")
    func oneReadForEveryStream() async throws {
        try await withServer { running, client in
            let readers = (0..<6).map { _ in ChangeStreamReader(client, fromStart: false) }
            defer { for reader in readers { reader.task.cancel() } }
            #expect(try await eventually { readers.allSatisfy { $0.start.withLock { $0 } != nil } })
            let before = running.store.changeBuffer.logReads
            for index in 0..<30 {
                let _: JSONValue = try await client.post(
                    "/trains", body: ["company": .string("Fan \(index)")] as JSONValue, root: "train")
            }
            #expect(try await eventually { readers.allSatisfy { $0.seen.count == 30 } })
            let newest = try running.store.changeBounds().newest
            for reader in readers { #expect(reader.seen == Array((newest - 29)...newest)) }
            // Read once per commit at most (fewer when commits come together); a read per stream
            // would be 180.
            #expect(running.store.changeBuffer.logReads - before <= 30)
        }
    }

    @Test("a stream resuming from a change older than the buffer holds reads the log, then goes on from the buffer")
    func olderThanTheBuffer() async throws {
        let directory = TemporaryDirectory()
        let configuration = ReferenceServer.Configuration(databasePath: directory.path("feed.sqlite").path)
        try await withServer(configuration: configuration) { _, client in
            for index in 0..<5 {
                let _: JSONValue = try await client.post(
                    "/trains", body: ["company": .string("Before \(index)")] as JSONValue, root: "train")
            }
        }
        // Started again on the same file: its buffer holds what is committed from now on.
        try await withServer(configuration: configuration) { running, client in
            let reader = ChangeStreamReader(client, fromStart: true)
            defer { reader.task.cancel() }
            #expect(try await eventually { reader.seen == [1, 2, 3, 4, 5] })
            for index in 0..<2 {
                let _: JSONValue = try await client.post(
                    "/trains", body: ["company": .string("After \(index)")] as JSONValue, root: "train")
            }
            #expect(try await eventually { reader.seen == [1, 2, 3, 4, 5, 6, 7] })
            #expect(running.store.changeBuffer.logReads >= 1)
        }
    }
}
