import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import TestServer
import Testing

/// What an app finds in its SQLite file after a restart, with the server gone: the second launch is
/// this test binary run again as a process of its own, so nothing of the first is in memory.
@Suite("After a restart", .timeLimit(.minutes(2)))
struct RestartTests {
    /// Set for the second launch: the SQLite file the first one left.
    static let secondLaunchFile = ProcessInfo.processInfo.environment["MONORAIL_RESTART_FILE"]

    /// Runs one test of this binary in a new process; its exit status and output.
    static func launchAgain(_ test: String, file: String) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--testing-library", "swift-testing", "--filter", "RestartTests/\(test)"]
        process.environment = ProcessInfo.processInfo.environment.merging(["MONORAIL_RESTART_FILE": file]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }

    @Test("a new process reading with cacheOnly gets train.cars and train.conductor as the online read had them")
    func embeddedRelationshipsFromDisk() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("restart.sqlite").path
            try await withHarness { harness in
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: harness.store.configuration, storage: storage)
                let train = try await Spec.Train.get(id: 1, in: store)
                #expect(train.cars.map(\.occupancy) == [40, 12] && train.conductor?.name == "Bill")
                try await storage.flush()
            }
            let (status, output) = try await Self.launchAgain("readsRelationshipsOffline", file: path)
            #expect(status == 0, "\(output)")
            #expect(output.contains("cars [40, 12], conductor Bill"), "\(output)")
        }
    }

    /// The second launch of ``embeddedRelationshipsFromDisk()``.
    @Test(.enabled(if: secondLaunchFile != nil))
    func readsRelationshipsOffline() async throws {
        let path = try #require(Self.secondLaunchFile)
        // As an app starts: the default store, configured once.
        let storage = try SQLiteStorage(path: path)
        MonoRail.configure {
            $0.apiRootURL = URL(string: "http://127.0.0.1:1")
            $0.storage = storage
        }
        let train = try await Spec.Train.get(id: 1, policy: .cacheOnly)
        #expect(train.company == "MonoRail Co.")
        #expect(train.cars.allSatisfy { $0.train === train })
        let cars = train.cars.map { $0.occupancy.map(String.init) ?? "nil" }.joined(separator: ", ")
        print("cars [\(cars)], conductor \(train.conductor?.name ?? "nil")")
    }
}
