import Foundation
import TestServer
import Testing

/// Type-checks Swift files against the MonoRail this test bundle was built with, as an app's
/// compiler would: the modules and the macro plugin from the build directory.
///
/// - Returns: `swiftc`'s exit status and what it printed.
func typecheck(_ files: [String: String]) async throws -> (status: Int32, output: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scaffold-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var paths: [String] = []
    for (name, contents) in files.sorted(by: { $0.key < $1.key }) {
        let file = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: file)
        paths.append(file.path)
    }
    // The test bundle sits in the build directory, next to the modules and the macro plugin.
    let build = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let plugin = build.appendingPathComponent("MonoRailMacros-tool")
    try #require(FileManager.default.isExecutableFile(atPath: plugin.path), "build the macro plugin first")
    // MonoRail's dependencies include C modules (NIO, swift-numerics); their module maps live in
    // the package checkouts.
    let checkouts = build.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("checkouts")
    func moduleMaps(in directory: URL) -> [String] {
        (FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix("/module.modulemap") && !$0.contains("-tool.build/") }
            .map { directory.appendingPathComponent($0).path }
    }
    // Targets without a module map of their own get one generated in the build directory.
    let generated = (try? FileManager.default.contentsOfDirectory(atPath: build.path)) ?? []
    let maps =
        moduleMaps(in: checkouts)
        + generated.filter { $0.hasSuffix(".build") && !$0.hasSuffix("-tool.build") }
        .map { build.appendingPathComponent($0).appendingPathComponent("module.modulemap").path }
        .filter { FileManager.default.fileExists(atPath: $0) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments =
        [
            "swiftc", "-typecheck", "-swift-version", "6", "-I", build.appendingPathComponent("Modules").path,
            "-load-plugin-executable", plugin.path + "#MonoRailMacros",
        ] + paths + maps.flatMap { ["-Xcc", "-fmodule-map-file=" + $0] }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = await offPool {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
    return (process.terminationStatus, text)
}
