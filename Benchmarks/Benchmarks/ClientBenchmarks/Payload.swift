import Foundation

/// The plain structs both decoders fill, with explicit snake_case coding keys.
struct BenchDepot: Codable, Sendable {
    var name: String
    var city: String
    var capacity: Int
}

struct BenchTrain: Codable, Sendable {
    var id: Int
    var company: String
    var numberOfCars: Int
    var maxSpeed: Double
    var inService: Bool
    var builtAt: Date
    var tags: [String]
    var depot: BenchDepot
    var conductorId: Int
    var notes: String

    enum CodingKeys: String, CodingKey {
        case id, company, tags, depot, notes
        case numberOfCars = "number_of_cars"
        case maxSpeed = "max_speed"
        case inService = "in_service"
        case builtAt = "built_at"
        case conductorId = "conductor_id"
    }
}

struct BenchTrainsRoot: Decodable {
    var trains: [BenchTrain]
}

/// The payloads `shared/bench/make-trains-json.py` writes, generated once per run.
enum Payload {
    static let directory: URL = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/bench/make-trains-json.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, directory.path]
        process.standardOutput = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
        return directory
    }()

    static let trains: Data = (try? Data(contentsOf: directory.appendingPathComponent("trains.json"))) ?? Data()
    static let train1: Data = (try? Data(contentsOf: directory.appendingPathComponent("train1.json"))) ?? Data()
}
