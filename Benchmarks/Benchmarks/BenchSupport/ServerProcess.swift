public import Foundation

/// The reference server in a process of its own (the `RoundTripServer` executable built beside the
/// benchmark), so that neither side's CPU time is charged to the other.
public struct ServerProcess: Sendable {
    /// The port it listens on.
    public let port: Int
    /// The server's standard input, held open for as long as the benchmark runs: the server exits
    /// when it closes.
    let input: Pipe

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts the server with `arguments` (`--trains N`, `--latency-ms N`) and waits for its port.
    public static func start(arguments: [String] = []) throws -> ServerProcess {
        let directory = Bundle.main.executableURL?.deletingLastPathComponent() ?? URL(fileURLWithPath: ".")
        let executable = directory.appendingPathComponent("RoundTripServer")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ServerError(
                "\(executable.path) is missing: run `swift build -c release --product RoundTripServer` first")
        }
        return try start(executable: executable, arguments: arguments)
    }

    /// Starts `executable` with `arguments` and waits for the line `port N` on its standard output;
    /// it is to exit when its standard input closes.
    public static func start(executable: URL, arguments: [String]) throws -> ServerProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 10 {
            line.append(first)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("port "), let port = Int(text.dropFirst(5)) else {
            throw ServerError("the server did not report its port: \(text)")
        }
        return ServerProcess(port: port, input: input)
    }
}

/// A benchmark that cannot run, and why.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
