import Foundation

/// Addresses on this machine where the network fails as a real one does, made with iproute2 in a
/// network namespace (root only): a black hole, where packets leave and nothing ever comes back,
/// and an address with no route, refused by the kernel at once.
///
/// The black hole is a veth pair into the namespace `monorail-blackhole`; the namespace's route
/// back to us is a `blackhole` route, so a SYN arrives and its answer is dropped — the connect
/// hangs as it does behind a dead Wi-Fi, not refused as a closed port is. Made once per process,
/// left in place for the next run; every command is idempotent.
enum NetworkFaults {
    /// A black-holed address: connections to any port hang.
    static let blackHole = "10.203.0.2"
    /// An address the kernel has no route to: `EHOSTUNREACH` at once.
    static let unreachable = "10.203.0.6"

    /// Why the machine cannot make the faulty addresses, or `nil` when they are in place.
    static let unavailable: String? = make()

    private static let namespace = "monorail-blackhole"

    private static func make() -> String? {
        guard getuid() == 0 else { return "network namespaces need root; this run is uid \(getuid())" }
        guard
            let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { return "iproute2's `ip` is not installed" }
        let steps: [[String]] = [
            ["netns", "add", namespace],
            ["link", "add", "mr-bh0", "type", "veth", "peer", "name", "mr-bh1", "netns", namespace],
            ["addr", "replace", "10.203.0.1/30", "dev", "mr-bh0"],
            ["link", "set", "mr-bh0", "up"],
            ["-n", namespace, "addr", "replace", "\(blackHole)/30", "dev", "mr-bh1"],
            ["-n", namespace, "link", "set", "mr-bh1", "up"],
            ["-n", namespace, "route", "replace", "blackhole", "10.203.0.1/32"],
            ["route", "replace", "unreachable", "\(unreachable)/32"],
        ]
        for arguments in steps {
            let (status, output) = run(ip, arguments)
            // Made by an earlier run: what exists is what is wanted.
            if status != 0 && !output.contains("File exists") {
                return "`ip \(arguments.joined(separator: " "))` failed: \(output)"
            }
        }
        let (_, routes) = run(ip, ["-n", namespace, "route", "show"])
        guard routes.contains("blackhole 10.203.0.1") else { return "the namespace has no blackhole route: \(routes)" }
        return nil
    }

    private static func run(_ path: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
