import Foundation

// The outbox crash harness (issue #16): `swift run OutboxCrashHarness --writes 1000 --kills 100`.
// Without `--child` it is the parent: it runs the reference server and kills launches of itself
// with `--child`, the app under test. It prints one JSON report and exits 0 when no write was
// lost, duplicated or refused and the server holds exactly the expected records.

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let writes = argument("--writes").flatMap(Int.init) ?? 1000
let seed = argument("--seed").flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
if CommandLine.arguments.contains("--child") {
    guard let database = argument("--database"), let server = argument("--server").flatMap(URL.init(string:)),
        let marker = argument("--marker")
    else {
        FileHandle.standardError.write(Data("--child needs --database, --server and --marker\n".utf8))
        exit(2)
    }
    do {
        try await HarnessChild(
            database: database, server: server, script: HarnessScript(seed: seed, count: writes), queuedMarker: marker
        ).run()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("launch failed: \(error)\n".utf8))
        exit(1)
    }
} else {
    let kills = argument("--kills").flatMap(Int.init) ?? 100
    let directory =
        argument("--directory").map { URL(fileURLWithPath: $0) }
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("outbox-crash-\(seed)")
    do {
        let report = try await HarnessParent(writes: writes, kills: kills, seed: seed, directory: directory).run()
        print(report)
        if report.passed { try? FileManager.default.removeItem(at: directory) }
        exit(report.passed ? 0 : 1)
    } catch {
        FileHandle.standardError.write(Data("the harness failed: \(error)\n".utf8))
        exit(1)
    }
}
