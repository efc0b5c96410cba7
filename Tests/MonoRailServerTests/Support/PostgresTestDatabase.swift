import Foundation
import Logging
import MonoRailServerPostgres
import MonoRailTransport
import NIOPosix
import PostgresNIO

/// A PostgreSQL for the tests: the one `MONORAIL_POSTGRES_URL` names (`.ci/run` starts one), or else
/// the cluster `start-postgres.sh` starts, or finds running from an earlier run; a new database on
/// it for each test.
enum PostgresTestDatabase {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The server's URL, found once per process.
    static let server: Result<String, Unavailable> = Result { () throws(Unavailable) in try findServer() }

    private static func findServer() throws(Unavailable) -> String {
        if let url = ProcessInfo.processInfo.environment["MONORAIL_POSTGRES_URL"], !url.isEmpty { return url }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("start-postgres.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw Unavailable(description: "start-postgres.sh did not run: \(error)")
        }
        let url = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard exitStatus(of: process) == 0 else { throw Unavailable(description: "no PostgreSQL: \(problem)") }
        return url.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The exit status of a process whose output was read to its end. Reaped here rather than by
    /// `waitUntilExit()`: once, on a first run, that spun forever beside the exited script (left a
    /// zombie), the process's termination never noticed by Foundation.
    private static func exitStatus(of process: Process) -> Int32 {
        var status: Int32 = 0
        while true {
            let reaped = waitpid(process.processIdentifier, &status, 0)
            if reaped == process.processIdentifier { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1 }
            if reaped == -1, errno == EINTR { continue }
            // Reaped already, by Foundation: it has the status.
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// The databases made for SQLite paths, so that a server started again on a path finds its records.
    private static let byPath = Locked<[String: PostgresLocation]>([:])

    /// The database standing for a SQLite file: made on first use, the same one after.
    static func database(for path: String) async throws -> PostgresLocation {
        if path != ":memory:", let made = byPath.withLock({ $0[path] }) { return made }
        let location = try await make()
        if path != ":memory:" { byPath.withLock { $0[path] = location } }
        return location
    }

    /// A new, empty database.
    static func make() async throws -> PostgresLocation {
        var location = try PostgresLocation(url: server.get())
        let name = "monorail_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await administer("CREATE DATABASE \"\(name)\"")
        location.database = name
        return location
    }

    /// Closes every connection to the database from the server's side, as a restart does.
    static func closeEveryConnection(to location: PostgresLocation) async throws {
        try await administer(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(location.database)' AND pid <> pg_backend_pid()"
        )
    }

    /// Runs a statement on the server's own database.
    private static func administer(_ sql: String) async throws {
        let location = try PostgresLocation(url: server.get())
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(),
            configuration: .init(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: .disable),
            id: 1, logger: Logger(label: "PostgresTestDatabase"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: connection.logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
