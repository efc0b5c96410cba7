import Foundation
import GRDB
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// The SQLite storage under concurrent use; CI runs this suite under the thread sanitizer.
@Suite("Storage under concurrency", .timeLimit(.minutes(5)))
struct StorageConcurrencyTests {
    @Test("8 tasks read, merge, write and clear one SQLite store at once; every answer is whole")
    func readMergeClear() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withReferenceServer(schema: .trains) { harness in
                let store = ResourceStore(
                    configuration: harness.store.configuration, storage: try SQLiteStorage(path: path))
                var ids: [ResourceID] = []
                for index in 0..<20 {
                    let train = Train()
                    train.company = "Company \(index)"
                    train.maxSpeed = Double(index)
                    try await train.create(in: store)
                    ids.append(try #require(train.id))
                }
                let allIDs = ids
                // The server's seed trains and these.
                let total = try await Train.get(in: store).count
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Network reads: merged, then written through.
                    for worker in 0..<3 {
                        group.addTask {
                            for round in 0..<15 {
                                do {
                                    if (round + worker).isMultiple(of: 2) {
                                        let trains = try await Train.get(in: store)
                                        #expect(trains.count == total)
                                    } else {
                                        let id = allIDs[(round * 7 + worker) % allIDs.count]
                                        let train = try await Train.get(id: id, in: store)
                                        let company = train.company
                                        if train.id != nil { #expect(company?.hasPrefix("Company") == true) }
                                    }
                                } catch let error as APIError where error.code == .cancelled {
                                    // A sign-out came while the request was under way: its answer is dropped.
                                }
                            }
                        }
                    }
                    // Cache reads: a whole record or none, never a torn one.
                    for worker in 0..<3 {
                        group.addTask {
                            for round in 0..<40 {
                                let id = allIDs[(round * 3 + worker) % allIDs.count]
                                do {
                                    let train = try await Train.get(id: id, policy: .cacheOnly, in: store)
                                    let (company, maxSpeed) = (train.company, train.maxSpeed)
                                    // A sign-out empties what it held for good; one that came after
                                    // the read may have emptied it while its values were read.
                                    if train.id != nil {
                                        #expect(company?.hasPrefix("Company") == true)
                                        #expect(maxSpeed != nil)
                                    }
                                } catch let error as APIError where error.code == .notCached || error.code == .cancelled
                                {
                                    // Cleared in between (read before the sign-out, merged after: dropped): allowed.
                                }
                                do {
                                    let trains = try await Train.get(policy: .cacheOnly, in: store)
                                    #expect(trains.count == total)
                                } catch let error as APIError where error.code == .notCached || error.code == .cancelled
                                {}
                            }
                        }
                    }
                    // Local edits on the live instances while all of that merges.
                    group.addTask {
                        for round in 0..<40 {
                            for train in store.instances(of: Train.self) { train.numberOfCars = round }
                            await Task.yield()
                        }
                    }
                    // Sign-outs.
                    group.addTask {
                        for _ in 0..<5 {
                            try await Task.sleep(for: .milliseconds(20))
                            try await store.clear()
                        }
                    }
                    try await group.waitForAll()
                }
                // After the storm, the store still answers from the network and then from the file.
                let trains = try await Train.get(in: store)
                #expect(trains.count == total)
                let cached = try await Train.get(policy: .cacheOnly, in: store)
                #expect(cached.map(\.id) == trains.map(\.id))
            }
        }
    }

    @Test("a reader is not blocked by a write transaction held open on the same file (WAL)")
    func readersDoNotWait() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            let storage = try SQLiteStorage(path: path)
            let key = RecordKey(model: "train", id: "1")
            try await storage.write([StoredRecord(key: key, body: Data([0x80]), fetchedAt: Date())], query: nil)
            try await storage.flush()
            // Another connection takes the write lock and keeps it until told, in one access on a
            // thread of its own.
            let other = try DatabaseQueue(path: path)
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let committed = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                try? other.inDatabase { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    try db.execute(sql: "DELETE FROM record")
                    holding.signal()
                    release.wait()
                    try db.execute(sql: "COMMIT")
                }
                committed.signal()
            }
            await Self.wait(for: holding)
            // The write is open: the reader sees the last committed state at once.
            #expect(try await storage.records([key])[key]?.body == Data([0x80]))
            release.signal()
            await Self.wait(for: committed)
            #expect(try await storage.records([key]).isEmpty)
            try other.close()
        }
    }

    /// Waits for a semaphore off the cooperative pool.
    static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }
}
