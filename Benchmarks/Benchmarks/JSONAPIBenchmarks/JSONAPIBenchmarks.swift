import BenchSupport
import Benchmark
import Foundation
import MonoRail

// A JSON:API compound document of 10,000 trains, each with its conductor (to-one) and depots
// (to-many) as linkage and the 1,000 conductors and 100 depots included, merged into @Resource
// models with the `.jsonAPI` preset, against `JSONDecoder` decoding the same document into plain
// structs. Paired as ResourceBenchmarks pairs: the two sides alternate inside each iteration.

@Resource(name: "train")
final class APITrain {
    var company: String = ""
    var numberOfCars: Int = 0
    var maxSpeed: Double = 0
    var inService: Bool = false
    var builtAt: Date?
    var tags: [String] = []
    @References var conductor: APIConductor?
    @References(.many) var depots: [APIDepot]
}

@Resource(name: "conductor")
final class APIConductor {
    var name: String = ""
    var yearsOfService: Int = 0
}

@Resource(name: "depot")
final class APIDepot {
    var name: String = ""
    var city: String = ""
}

/// The plain structs `JSONDecoder` reads the same document into.
struct Document: Decodable {
    struct Identifier: Decodable {
        var type: String
        var id: String
    }
    struct ToOne: Decodable { var data: Identifier? }
    struct ToMany: Decodable { var data: [Identifier] }
    struct TrainAttributes: Decodable {
        var company: String
        var number_of_cars: Int
        var max_speed: Double
        var in_service: Bool
        var built_at: Date?
        var tags: [String]
    }
    struct TrainRelationships: Decodable {
        var conductor: ToOne
        var depots: ToMany
    }
    struct Train: Decodable {
        var type: String
        var id: String
        var attributes: TrainAttributes
        var relationships: TrainRelationships
    }
    /// An included conductor or depot: the members of both, each optional.
    struct IncludedAttributes: Decodable {
        var name: String
        var years_of_service: Int?
        var city: String?
    }
    struct Included: Decodable {
        var type: String
        var id: String
        var attributes: IncludedAttributes
    }
    var data: [Train]
    var included: [Included]
}

/// The document, made once: deterministic, about 4 MB.
let document: Data = {
    var trains: [String] = []
    trains.reserveCapacity(10_000)
    for index in 0..<10_000 {
        let depots = (0..<(index % 3 + 1)).map { #"{"type":"depots","id":"\#((index + $0) % 100 + 1)"}"# }
        trains.append(
            #"{"type":"trains","id":"\#(index + 1)","attributes":{"company":"Company \#(index % 97)","number_of_cars":\#(index % 12 + 1),"max_speed":\#(Double(index % 300) + 0.5),"in_service":\#(index % 2 == 0),"built_at":"2024-05-0\#(index % 9 + 1)T12:00:00Z","tags":["t\#(index % 5)","line"]},"relationships":{"conductor":{"data":{"type":"conductors","id":"\#(index % 1_000 + 1)"},"links":{"related":"/trains/\#(index + 1)/conductor"}},"depots":{"data":[\#(depots.joined(separator: ","))]}},"links":{"self":"/trains/\#(index + 1)"}}"#
        )
    }
    var included: [String] = []
    for index in 0..<1_000 {
        included.append(
            #"{"type":"conductors","id":"\#(index + 1)","attributes":{"name":"Conductor \#(index)","years_of_service":\#(index % 40)}}"#
        )
    }
    for index in 0..<100 {
        included.append(
            #"{"type":"depots","id":"\#(index + 1)","attributes":{"name":"Depot \#(index)","city":"City \#(index % 17)"}}"#
        )
    }
    let text =
        #"{"data":[\#(trains.joined(separator: ","))],"included":[\#(included.joined(separator: ","))],"meta":{"pagination":{"count":10000}},"links":{"next":null}}"#
    return Data(text.utf8)
}()

let benchmarks: @Sendable () -> Void = {
    let rawDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
    let clock = ContinuousClock()
    var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
    configuration.conventions = .jsonAPI
    let fixed = configuration

    var kept: [APITrain] = []
    let metrics = [metric("JSONDecoder (ms)"), metric("MonoRail models (ms)"), metric("ratio models/raw (%)")]
    Benchmark(
        "JSON:API compound document, 10k trains + 1,100 included, into models (new), paired",
        configuration: .init(metrics: metrics, warmupIterations: 2, maxDuration: .seconds(40), maxIterations: 30)
    ) { benchmark in
        for iteration in benchmark.scaledIterations {
            kept = []
            let store = ResourceStore(configuration: fixed)
            var raw = Duration.zero
            var mine = Duration.zero
            for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                let start = clock.now
                if side == 0 {
                    let decoded = try rawDecoder.decode(Document.self, from: document)
                    blackHole(decoded.data.count + decoded.included.count)
                    raw = clock.now - start
                } else {
                    kept = try APITrain.merge(listBody: document, contentType: "application/vnd.api+json", in: store)
                    precondition(kept.count == 10_000 && kept[0].conductor?.name == "Conductor 0")
                    mine = clock.now - start
                }
            }
            benchmark.measurement(metrics[0], microseconds(raw) / 1000)
            benchmark.measurement(metrics[1], microseconds(mine) / 1000)
            benchmark.measurement(metrics[2], microseconds(mine) * 100 / max(1, microseconds(raw)))
        }
    }
}
