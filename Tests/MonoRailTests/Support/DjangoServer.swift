import Foundation
import TestServer

/// The Django REST framework app in `Tests/DjangoInterop`, started with the system's `python3`.
///
/// Django, DRF and django-filter are installed with pip when they are missing, so `swift test`
/// works on a fresh machine with Python; `.ci/run` installs them up front.
final class DjangoServer {
    let port: Int
    private let process: Process
    private let input: Pipe

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    private init(port: Int, process: Process, input: Pipe) {
        self.port = port
        self.process = process
        self.input = input
    }

    static let directory = repositoryRoot.appendingPathComponent("Tests/DjangoInterop")

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts the app on a free port with a fresh database, holding `extraTrains` more trains
    /// ("Bulk 0", "Bulk 1", …) after the two it always has; with a `pageSize`, DRF's `PAGE_SIZE`
    /// pages every list by default, as apps configured that way do.
    static func start(extraTrains: Int = 0, pageSize: Int? = nil) async throws -> DjangoServer {
        try await offPool { Result { try installIfNeeded() } }.get()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", directory.appendingPathComponent("serve.py").path, String(extraTrains)]
            + (pageSize.map { [String($0)] } ?? [])
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The first line of output is the port; reading it blocks, so it runs off the cooperative pool.
        let line: String = await withCheckedContinuation { continuation in
            Thread {
                var bytes: [UInt8] = []
                while true {
                    let chunk = output.fileHandleForReading.readData(ofLength: 1)
                    guard let byte = chunk.first, byte != UInt8(ascii: "\n") else { break }
                    bytes.append(byte)
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }.start()
        }
        guard let port = Int(line.trimmingCharacters(in: .whitespaces)) else {
            process.terminate()
            let stderr = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
            throw StartError(description: "the Django app did not start: \(line) \(stderr)")
        }
        return DjangoServer(port: port, process: process, input: input)
    }

    /// Stops the app by closing its standard input; it exits on its own, unwaited for, so that no
    /// thread of the cooperative pool blocks on it.
    func stop() {
        try? input.fileHandleForWriting.close()
    }

    private static func installIfNeeded() throws {
        if run(["python3", "-c", "import django, rest_framework, django_filters"]) == 0 { return }
        let status = run([
            "python3", "-m", "pip", "install", "--quiet", "django", "djangorestframework", "django-filter",
        ])
        guard status == 0 else {
            throw StartError(description: "pip could not install django, djangorestframework and django-filter")
        }
    }

    private static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
