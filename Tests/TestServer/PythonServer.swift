public import Foundation

/// A Python web app in the repository's tests, started with the system's `python3`: the Django REST
/// framework app in `Tests/DjangoInterop` or the FastAPI app in `Tests/FastAPIInterop`.
///
/// The app's packages are installed with pip when they are missing, so `swift test` works on a
/// fresh machine with Python; `.ci/run` installs them up front.
public final class PythonServer {
    /// Which app, and what it needs.
    public struct App: Sendable {
        var name: String
        var script: URL
        /// The modules it imports, checked with `python3 -c "import …"`.
        var modules: [String]
        /// The pip packages that provide them.
        var packages: [String]

        /// The Django REST framework app, with drf-spectacular's OpenAPI document at `/schema/`.
        public static let django = App(
            name: "Django", script: repositoryRoot.appendingPathComponent("Tests/DjangoInterop/serve.py"),
            modules: ["django", "rest_framework", "django_filters", "drf_spectacular"],
            packages: ["django", "djangorestframework", "django-filter", "drf-spectacular"])
        /// The djangorestframework-jsonapi app: trains, cars and depots as JSON:API documents.
        public static let jsonAPI = App(
            name: "djangorestframework-jsonapi",
            script: repositoryRoot.appendingPathComponent("Tests/JSONAPIInterop/serve.py"),
            modules: ["django", "rest_framework", "rest_framework_json_api", "django_filters"],
            packages: ["django", "djangorestframework", "djangorestframework-jsonapi", "django-filter"])
        /// The FastAPI app, with FastAPI's OpenAPI document at `/openapi.json`.
        public static let fastAPI = App(
            name: "FastAPI", script: repositoryRoot.appendingPathComponent("Tests/FastAPIInterop/serve.py"),
            modules: ["fastapi", "uvicorn", "fastapi_pagination"],
            packages: ["fastapi", "uvicorn", "fastapi-pagination"])
    }

    /// The port it listens on.
    public let port: Int
    private let process: Process
    private let input: Pipe

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    private init(port: Int, process: Process, input: Pipe) {
        self.port = port
        self.process = process
        self.input = input
    }

    /// Why the app did not start.
    public struct StartError: Error, CustomStringConvertible {
        /// What its script printed, or what pip said.
        public var description: String
    }

    /// Starts the app on a free port with a fresh database, passing `arguments` to its script.
    public static func start(_ app: App, arguments: [String] = []) async throws -> PythonServer {
        try await offPool { Result { try installIfNeeded(app) } }.get()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", app.script.path] + arguments
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
            throw StartError(description: "the \(app.name) app did not start: \(line) \(stderr)")
        }
        return PythonServer(port: port, process: process, input: input)
    }

    /// Starts the Django app, holding `extraTrains` more trains ("Bulk 0", "Bulk 1", …) after the two
    /// it always has; with a `pageSize`, DRF's `PAGE_SIZE` pages every list by default, as apps
    /// configured that way do.
    public static func django(extraTrains: Int = 0, pageSize: Int? = nil) async throws -> PythonServer {
        try await start(.django, arguments: [String(extraTrains)] + (pageSize.map { [String($0)] } ?? []))
    }

    /// Starts the djangorestframework-jsonapi app, holding `extraTrains` more trains ("Bulk 0", …)
    /// after its two.
    public static func jsonAPI(extraTrains: Int = 0) async throws -> PythonServer {
        try await start(.jsonAPI, arguments: [String(extraTrains)])
    }

    /// Starts the FastAPI app, holding `extraBooks` more books ("Volume 0", …) after its three.
    public static func fastAPI(extraBooks: Int = 0) async throws -> PythonServer {
        try await start(.fastAPI, arguments: [String(extraBooks)])
    }

    /// Stops the app by closing its standard input; it exits on its own, unwaited for, so that no
    /// thread of the cooperative pool blocks on it.
    public func stop() {
        try? input.fileHandleForWriting.close()
    }

    private static func installIfNeeded(_ app: App) throws {
        if run(["python3", "-c", "import " + app.modules.joined(separator: ", ")]) == 0 { return }
        let status = run(["python3", "-m", "pip", "install", "--quiet"] + app.packages)
        guard status == 0 else {
            throw StartError(description: "pip could not install \(app.packages.joined(separator: ", "))")
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
