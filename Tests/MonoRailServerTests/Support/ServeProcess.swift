import Foundation
import MonoRail
import MonoRailTesting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `swift build --build-tests` (and `swift test`) put the `monorail` executable next to the test bundle.
var monorailBinary: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("monorail")
}

/// Runs `monorail serve` with these arguments on a free port, and a client for it without retries,
/// once it accepts connections.
func launchServe(_ arguments: [String]) async throws -> (Process, APIClient, URL) {
    guard FileManager.default.isExecutableFile(atPath: monorailBinary.path) else {
        throw APIError(.invalidConfiguration, "build the monorail executable first (swift build --build-tests)")
    }
    for _ in 0..<5 {
        let port = Int.random(in: 20_000...60_000)
        let process = Process()
        process.executableURL = monorailBinary
        process.arguments = ["serve", "--port", String(port)] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let baseURL = URL(string: "http://127.0.0.1:\(port)")
        let client = APIClient(
            configuration: .init(
                baseURL: baseURL, transport: MonoRail.defaultTransport, retryPolicy: .none, timeout: .seconds(5)))
        let up = try await eventually(within: .seconds(30)) { process.isRunning && ping(port) }
        if up, let baseURL { return (process, client, baseURL) }
        if process.isRunning { process.terminate() }
    }
    throw CancellationError()
}

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
