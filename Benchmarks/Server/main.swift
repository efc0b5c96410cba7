import Foundation
import MonoRailServer

// The reference server, in a process of its own, for the round-trip benchmarks: what `monorail
// serve` runs (the built-in Train / Car / Conductor schema, SQLite in memory), without the request
// log. Running apart, its CPU time is not charged to the client, nor the client's to it. Prints
// `port N` once listening; exits when its standard input closes, so it never outlives the benchmark
// that started it.

let server = try ReferenceServer(schema: .trains, configuration: .init(port: 0))
let watchdog = Thread {
    var byte: UInt8 = 0
    while read(0, &byte, 1) > 0 {}
    exit(0)
}
watchdog.start()
try await server.run { port in
    // Unbuffered, so the benchmark reads the line at once.
    FileHandle.standardOutput.write(Data("port \(port)\n".utf8))
}
