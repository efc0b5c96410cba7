import Foundation
import MonoRail
import MonoRailTesting
import TestServer
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the real `monorail serve` binary, kills it with SIGKILL, and checks that every write it had
/// acknowledged is there when it comes back.
@Suite("Reference server: crash safety", .timeLimit(.minutes(5)))
struct CrashSafetyTests {
    let files = TemporaryDirectory()

    func launch(database: String, extra: [String] = []) async throws -> (Process, APIClient) {
        let (process, client, _) = try await launchServe(["--database", database] + extra)
        return (process, client)
    }

    @Test("a killed server loses no acknowledged write")
    func killed() async throws {
        let database = files.path("crash.sqlite").path
        var acknowledged: [Int] = []
        do {
            let (process, client) = try await launch(database: database)
            for index in 0..<40 {
                let train: JSONValue = try await client.post(
                    "/trains", body: ["company": .string("Crash \(index)")] as JSONValue, root: "train")
                if let id = train["id"]?.intValue { acknowledged.append(id) }
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        #expect(acknowledged.count == 40)
        let (process, client) = try await launch(database: database)
        defer { process.terminate() }
        let trains: [JSONValue] = try await client.get("/trains", root: "trains")
        let stored = Set(trains.compactMap { $0["id"]?.intValue })
        #expect(Set(acknowledged).isSubset(of: stored))
        #expect(trains.count == 42, "the two seeded trains and the forty written")
    }
}

extension CrashSafetyTests {
    @Test("the command serves a schema file given with --schema")
    func schemaOption() async throws {
        let schema = files.path("schema.json")
        try Data(
            #"{"resources": [{"name": "person", "plural": "people", "fields": [{"name": "name", "type": "string"}]}], "seed": {"people": [{"name": "Grace"}]}}"#
                .utf8
        ).write(to: schema)
        let (process, client) = try await launch(database: ":memory:", extra: ["--schema", schema.path])
        defer { process.terminate() }
        let people: [JSONValue] = try await client.get("/people", root: "people")
        #expect(people.first?["name"] == "Grace")
    }
}

/// Whether something accepts TCP connections on 127.0.0.1:port.
