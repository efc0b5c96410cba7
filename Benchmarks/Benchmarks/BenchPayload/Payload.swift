public import Foundation

/// The plain structs both decoders fill, with explicit snake_case coding keys.
public struct BenchDepot: Codable, Sendable, Equatable {
    public var name: String
    public var city: String
    public var capacity: Int
}

public struct BenchTrain: Codable, Sendable {
    public var id: Int
    public var company: String
    public var numberOfCars: Int
    public var maxSpeed: Double
    public var inService: Bool
    public var builtAt: Date
    public var tags: [String]
    public var depot: BenchDepot
    public var conductorId: Int
    public var notes: String

    enum CodingKeys: String, CodingKey {
        case id, company, tags, depot, notes
        case numberOfCars = "number_of_cars"
        case maxSpeed = "max_speed"
        case inService = "in_service"
        case builtAt = "built_at"
        case conductorId = "conductor_id"
    }
}

public struct BenchTrainsRoot: Decodable {
    public var trains: [BenchTrain]
}

/// The payloads `shared/bench/make-trains-json.py` writes, generated once per run.
public enum Payload {
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

    public static let trains: Data = (try? Data(contentsOf: directory.appendingPathComponent("trains.json"))) ?? Data()
    public static let train1: Data = (try? Data(contentsOf: directory.appendingPathComponent("train1.json"))) ?? Data()
}
