import Foundation
import MonoRail
import MonoRailScaffold
import TestModels
import TestServer
import Testing

@Suite("monorail scaffold", .timeLimit(.minutes(5)))
struct ScaffoldTests {
    static let sample: JSONValue = [
        "trains": [
            [
                "id": 1, "company": "MonoRail Co.", "number_of_cars": 5, "max_speed": 46.8, "in_service": true,
                "built_at": "2024-05-06T07:08:09.123Z", "tags": ["monorail"], "depot_id": 4, "yard_ids": [1, 2],
                "cars": [["id": 1, "occupancy": 40, "needs_repairs": false, "train_id": 1]],
                "conductor": ["id": 1, "name": "Bill", "train_id": 1], "meta": nil, "class": "express",
            ],
            ["id": 2, "company": "DB", "number_of_cars": 12, "max_speed": 300, "meta": ["a": 1]],
        ]
    ]

    @Test("infers types, references and embedded models, singularizing names")
    func generates() throws {
        let source = try Scaffold.source(from: Self.sample)
        for line in [
            "final class Train {", "var company: String?", "var numberOfCars: Int?", "var maxSpeed: Double?",
            "var inService: Bool?", "var builtAt: Date?", "var tags: [String]?", "@References var depot: Depot?",
            "@References(.many) var yards: [Yard]", "@Has(.embedsMany) var cars: [Car]",
            "@Has(.embedsOne) var conductor: Conductor?", "var meta: JSONValue?", "var `class`: String?",
            "final class Car {", "var occupancy: Int?", "@References var train: Train?", "final class Conductor {",
            "final class Depot {", "final class Yard {",
        ] {
            #expect(source.contains(line), "missing: \(line)\n\(source)")
        }
        #expect(!source.contains("var id"))
    }

    @Test("the generated source compiles against MonoRail")
    func compiles() async throws {
        let source = try Scaffold.source(from: Self.sample)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scaffold-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Models.swift")
        try Data((source + "\nlet check: [Car] = Train().cars\n").utf8).write(to: file)

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
                "-load-plugin-executable", plugin.path + "#MonoRailMacros", file.path,
            ] + maps.flatMap { ["-Xcc", "-fmodule-map-file=" + $0] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(process.terminationStatus == 0, "\(text)\n\(source)")
    }

    @Test("a bare record and a bare array take the given name")
    func names() throws {
        #expect(try Scaffold.source(from: ["id": 1, "title": "Hi"], name: "post").contains("final class Post {"))
        #expect(try Scaffold.source(from: [["id": 1, "x": 1]], name: "point").contains("final class Point {"))
        #expect(throws: Scaffold.Failure.self) { try Scaffold.source(from: "text") }
    }
}
