import Foundation
import MonoRailServer
import MonoRailServerPostgres

// The reference server, in a process of its own, for the round-trip and storage benchmarks: what
// `monorail serve` runs (the built-in Train / Car / Conductor schema, SQLite in memory), without the
// request log. Running apart, its CPU time is not charged to the client, nor the client's to it.
// Prints `port N` once listening; exits when its standard input closes, so it never outlives the
// benchmark that started it.
//
// Options: `--trains N` adds N trains before it listens; `--latency-ms N` delays every answer;
// `--database postgres://…` keeps the records in PostgreSQL, where several servers share them.

let arguments = CommandLine.arguments
func option(_ name: String) -> Int? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
}

var configuration = ReferenceServer.Configuration(port: 0)
if let latency = option("--latency-ms") { configuration.faults = FaultInjection(latency: .milliseconds(latency)) }
let server: ReferenceServer
if let index = arguments.firstIndex(of: "--database"), arguments.indices.contains(index + 1) {
    let store = try RecordStore(schema: .trains, location: PostgresLocation(url: arguments[index + 1]))
    server = ReferenceServer(store: store, configuration: configuration)
} else {
    server = try ReferenceServer(schema: .trains, configuration: configuration)
}
if let count = option("--trains"), let trains = server.store.schema.resource(plural: "trains") {
    let companies = [
        "Deutsche Bahn AG", "SNCF Voyageurs", "Trenitalia S.p.A.", "Renfe Operadora", "ÖBB Personenverkehr",
    ]
    for index in 0..<count {
        _ = try server.store.create(
            trains,
            attributes: [
                "company": .string(companies[index % companies.count]), "number_of_cars": .int(Int64(2 + index % 14)),
                "max_speed": .double(80 + Double(index % 2400) / 10), "in_service": .bool(index % 7 != 0),
            ])
    }
}
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
