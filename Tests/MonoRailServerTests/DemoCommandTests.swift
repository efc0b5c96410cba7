import Foundation
import MonoRailServer
import Testing

/// Runs the real `monorail demo` binary, as the README tells people to.
@Suite("monorail demo", .timeLimit(.minutes(5)))
struct DemoCommandTests {
    @Test("walks the README's story against its own server and exits 0")
    func demo() async throws {
        let binary = monorailBinary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the monorail executable first")
        let (status, text) = try await runCommand(binary, ["demo"])
        #expect(status == 0, "\(text)")
        for line in [
            "sameTrain === train: true", "first === second: true", "second.maxSpeed (server value wins): 55.5",
            "second.company (unsaved edit kept): Edited, not saved", "error.statusCode: 422",
            #"error.errors.fullMessages: ["Company can't be blank"]"#, "train.isDeleted: true", "404 Not Found",
            "→ POST /trains", "→ DELETE /trains/3", "trainA.cars occupancy: 40, 12",
            "trainA.cars[0].train === trainA: true",
            "trainA.conductor: nil", "trainB.conductor: Bill", "→ PUT /conductors/1",
            "request Content-Type: multipart/form-data", "conductor.photo: bill.png, 200008 bytes at /uploads/",
            "downloaded == uploaded: true", "cache: 1 file, 200008 bytes", "packed === trainA: true",
            "response Accept asked for: application/x-msgpack",
            "Train.get(policy: .networkFirst) source: cache", "trains: 1 MonoRail Co., 2 Deutsche Bahn AG",
            "Train.get(id: 1, policy: .cacheOnly).maxSpeed: 55.5", "cached.cars occupancy: 40, 12",
            "answer.source: cache", "maxSpeed at once (cached): 55.5", "maxSpeed after the revalidation: 61.0",
            "the same instance: true", "→ GET /trains/1 (If-None-Match: ",
            "line.id (local until the server answers): local", "after the restart, outbox.pendingCount: 3",
            "train.maxSpeed (kept, pending): 80.0, true", "→ PUT /trains/1", "→ POST /trains\n", "→ POST /cars",
            "train.hasPendingChanges: false", "the line's cars on the server (occupancy): [6]",
            "writes in the server's Idempotency-Key ledger: 3",
            "fast.records: 2 Deutsche Bahn AG 300.0", "fast.total, fast.hasNextPage: 2, true",
            "after loadNextPage(): 2 Deutsche Bahn AG 300.0, 1 MonoRail Co. 80.0",
            "→ GET /trains?max_speed%5Bgte%5D=50&order=-max_speed&page=2&per_page=1",
            "fast.records: 5 Express 200.0, 1 MonoRail Co. 80.0\n   fast.total: 2\n   → GET /trains\n",
            "the list was told: true", "train.cars (occupancy): 80, 24\n   → POST /cars\n",
            "liveUpdates.state: live\n   (a first stream starts from now: what the app read before it is read once more)\n   → GET /trains?order=id\n   → GET /changes\n",
            // The other client's create, and no request of the app's: the stream brought it.
            "(another client created Pushed Line)\n   all.records: 1 MonoRail Co., 2 Deutsche Bahn AG, 4 Night Line, "
                + "5 Express, 6 Pushed Line\n   → POST /trains\n   (server stopped",
            "liveUpdates.state: waiting", "6 Pushed Line, renamed after the restart", "resumed with Last-Event-ID: 1",
        ] {
            #expect(text.contains(line), "missing: \(line)")
        }
        // The train's save and the line's create go side by side; the car's create waits for the line's.
        let sent = text.components(separatedBy: "(server back)").last ?? ""
        let line = try #require(sent.range(of: "→ POST /trains\n"))
        let car = try #require(sent.range(of: "→ POST /cars"))
        #expect(line.lowerBound < car.lowerBound)
    }
}

@Suite("monorail demo --trace", .timeLimit(.minutes(5)))
struct TraceDemoCommandTests {
    @Test("prints the span trees of a read and an offline write, from the app's action to the server's SQL")
    func trace() async throws {
        let binary = monorailBinary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the monorail executable first")
        let (status, text) = try await runCommand(binary, ["demo", "--trace"])
        #expect(status == 0, "\(text)")
        let read = try #require(text.components(separatedBy: "1. A read").last?.components(separatedBy: "2. ").first)
        for line in [
            "   Train.get (internal, ", "monorail.response.source=network [merged, persisted, announced]",
            "      └─ GET /trains/{id} (client, ", "         └─ /{resource}/{id} (server, ",
            "            └─ SELECT trains (client, ",
        ] {
            #expect(read.contains(line), "missing: \(line) in\n\(text)")
        }
        let kept = try #require(
            text.components(separatedBy: "2. An offline write").last?.components(separatedBy: "3. ").first)
        #expect(kept.contains("   Train.save (internal, "), "\(text)")
        #expect(kept.contains("monorail.response.source=outbox"), "\(text)")
        #expect(kept.contains("└─ PUT /trains/{id} (client, "), "\(text)")
        // One attempt within the offline deadline: refused, or a pooled connection found closed.
        #expect(
            kept.contains("error.type=cannotConnect") || kept.contains("error.type=connectionClosed"), "\(text)")
        let replay = try #require(text.components(separatedBy: "3. The server is back").last)
        #expect(replay.contains("   Outbox.replay (internal, "), "\(text)")
        #expect(
            replay.contains("monorail.outbox.outcome=confirmed ← linked to the span that kept the write"), "\(text)")
        #expect(replay.contains("http.response.status_code=200"), "\(text)")
        #expect(replay.contains("└─ UPDATE trains (client, "), "\(text)")
    }
}

@Suite("monorail scaffold command", .timeLimit(.minutes(5)))
struct ScaffoldCommandTests {
    @Test("writes models for a sample file, and for a URL of the reference server")
    func scaffold() async throws {
        let binary = monorailBinary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the monorail executable first")
        let sample = FileManager.default.temporaryDirectory.appendingPathComponent("sample-\(UUID().uuidString).json")
        try Data(#"{"cars": [{"id": 1, "occupancy": 4, "train_id": 2}]}"#.utf8).write(to: sample)
        defer { try? FileManager.default.removeItem(at: sample) }
        let fromFile = try await runCommand(binary, ["scaffold", sample.path]).output
        #expect(fromFile.contains("final class Car {"))
        #expect(fromFile.contains("@References var train: Train?"))

        let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
        defer { Task { await server.stop() } }
        let fromURL = try await runCommand(binary, ["scaffold", server.baseURL.absoluteString + "/trains/1"]).output
        #expect(fromURL.contains("final class Train {"))
        #expect(fromURL.contains("@Has(.embedsMany) var cars: [Car]"))
        #expect(fromURL.contains("@Has(.embedsOne) var conductor: Conductor?"))
    }

    @Test("--openapi writes a file per model and a configuration; a bad document exits non-zero, saying why")
    func openAPI() async throws {
        let binary = monorailBinary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the monorail executable first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = folder.appendingPathComponent("openapi.json")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(
            #"""
            {"openapi": "3.1.0", "info": {"title": "Shop", "version": "1"},
             "paths": {"/products/{id}": {"get": {"responses": {"200": {"description": "",
               "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Product"}}}}}}}},
             "components": {"schemas": {"Product": {"type": "object", "properties": {
               "id": {"type": "integer"}, "name": {"type": "string"}, "added": {"type": "string", "format": "date"}}}}}}
            """#.utf8
        ).write(to: document)
        let models = folder.appendingPathComponent("Models")
        let written = try await runCommand(binary, ["scaffold", "--openapi", document.path, "--output", models.path])
        #expect(written.status == 0, "\(written.output)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: models.path).sorted() == [
                "Product.swift", "ShopConfiguration.swift",
            ])
        let product = try String(contentsOf: models.appendingPathComponent("Product.swift"), encoding: .utf8)
        #expect(product.contains("@Field(transform: .dateOnly) var added: Date?"))

        let bad = folder.appendingPathComponent("bad.json")
        try Data(#"{"swagger": "2.0"}"#.utf8).write(to: bad)
        let refused = try await runCommand(binary, ["scaffold", "--openapi", bad.path])
        #expect(refused.status != 0)
        #expect(refused.output.contains("error: the document is Swagger 2.0"))
        let both = try await runCommand(binary, ["scaffold", "--openapi", bad.path, bad.path])
        #expect(both.status != 0)
    }

    @Test("a bare sample is named from its URL's path, or --name")
    func sampleNames() async throws {
        let binary = monorailBinary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the monorail executable first")
        let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0, envelope: .bare)).start()
        defer { Task { await server.stop() } }
        let fromPath = try await runCommand(binary, ["scaffold", server.baseURL.absoluteString + "/trains/1"])
        #expect(fromPath.status == 0)
        #expect(fromPath.output.contains("final class Train {"), "\(fromPath.output)")
        let named = try await runCommand(
            binary, ["scaffold", "--name", "Locomotive", server.baseURL.absoluteString + "/trains/1"])
        #expect(named.output.contains("final class Locomotive {"))
        let again = try await runCommand(binary, ["scaffold", server.baseURL.absoluteString + "/trains/1"])
        #expect(again.output == fromPath.output)
    }
}

/// Runs the `monorail` binary with `arguments`; its exit status and everything it printed.
func runCommand(_ binary: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    return await withCheckedContinuation { continuation in
        Thread {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
        }.start()
    }
}
