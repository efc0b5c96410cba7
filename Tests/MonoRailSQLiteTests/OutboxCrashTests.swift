import Foundation
import MonoRail
import TestServer
import Testing

/// The crash harness, short: 200 writes queued and sent by launches of the app killed with SIGKILL
/// ten times, against the reference server dropping answers and refusing with 503. The full run
/// (`swift run OutboxCrashHarness --writes 1000 --kills 100`) is in the closing note.
@Suite("The outbox under kill -9", .timeLimit(.minutes(5)))
struct OutboxCrashTests {
    /// The harness executable, built beside the test bundle.
    static func harness() throws -> URL {
        let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])].map {
            $0.deletingLastPathComponent().appendingPathComponent("OutboxCrashHarness")
        }
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) })
    }

    @Test("every write applied exactly once, none lost, the server state as expected")
    func shortRun() async throws {
        let process = Process()
        process.executableURL = try Self.harness()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-crash-\(UUID())")
        process.arguments = ["--writes", "200", "--kills", "10", "--directory", directory.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try JSONParser().parse(data)
        #expect(process.terminationStatus == 0, "\(String(decoding: data, as: UTF8.self))")
        #expect(report["writes"] == 200)
        #expect(report["applied"] == 200)
        #expect(report["lost"] == 0)
        #expect(report["duplicated"] == 0)
        #expect(report["refused"] == 0)
        #expect(report["stateMatches"] == true)
        #expect((report["kills"]?.intValue ?? 0) >= 1)
        #expect(report["problems"] == [])
    }
}
