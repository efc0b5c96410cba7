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

    /// `swift build --build-tests` (and `swift test`) put the `monorail` executable next to the test bundle.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("monorail")
    }

    func launch(database: String, extra: [String] = []) async throws -> (Process, APIClient) {
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            let process = Process()
            process.executableURL = Self.binary
            process.arguments = ["serve", "--db", database, "--port", String(port)] + extra
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let client = APIClient(
                configuration: .init(
                    baseURL: URL(string: "http://127.0.0.1:\(port)"), transport: MonoRail.defaultTransport,
                    retryPolicy: .none, timeout: .seconds(5)))
            let up = try await eventually(within: .seconds(30)) { process.isRunning && ping(port) }
            if up { return (process, client) }
            if process.isRunning { process.terminate() }
        }
        throw CancellationError()
    }

    @Test("a killed server loses no acknowledged write")
    func killed() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build the monorail executable first")
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
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build the monorail executable first")
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
private func ping(_ port: Int) -> Bool {
    #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    return result == 0
}
