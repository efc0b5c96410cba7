import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// `clear()` is a fence: what was asked for before it and answers after it is dropped — not merged
/// into the next account's instances, not kept on disk.
@Suite("Sign-out fences work in flight", .timeLimit(.minutes(5)))
struct SignOutFenceTests {
    /// The reference server holding these answers back, made as the requests arrive.
    static let faults = FaultInjection(slowResponses: [
        "/trains/1?v=slow": .milliseconds(1500), "/trains?v=slow": .milliseconds(1500),
    ])

    @Test("a read and a list read held until after clear() are dropped: nothing in memory, nothing on disk")
    func heldReads() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("account.sqlite").path
            try await withHarness(server: .init(faults: Self.faults)) { harness in
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                let read = Task { try await Train.get(id: 1, parameters: ["v": "slow"], in: store) }
                let list = Task { try await Train.get(path: "/trains", parameters: ["v": "slow"], in: store) }
                #expect(
                    try await eventually {
                        let entries = harness.journal.entries
                        return entries.contains("GET /trains/1?v=slow") && entries.contains("GET /trains?v=slow")
                    })
                try await store.clear()

                let readError = await #expect(throws: APIError.self) { try await read.value }
                #expect(readError?.code == .cancelled)
                let listError = await #expect(throws: APIError.self) { try await list.value }
                #expect(listError?.code == .cancelled)
                #expect(store.instance(of: Train.self, id: 1) == nil)
                let cached = await #expect(throws: APIError.self) {
                    try await Train.get(id: 1, policy: .cacheOnly, in: store)
                }
                #expect(cached?.code == .notCached)
                try await storage.flush()
                #expect(try await storage.records([RecordKey(model: "train", id: "1")]).isEmpty)
                #expect(try await storage.records([RecordKey(model: "train", id: "2")]).isEmpty)
                // After the fence the store works as before, for the next account.
                #expect(try await Train.get(id: 1, in: store).company == "MonoRail Co.")
            }
        }
    }
}
