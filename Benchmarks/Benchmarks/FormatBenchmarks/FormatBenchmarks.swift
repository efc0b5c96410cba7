import BenchPayload
import BenchSupport
import Benchmark
import Foundation
import MonoRail

// MessagePack against JSON on the 10,000-record payload (shared/bench/make-trains-json.py,
// converted to MessagePack once per run), decoded into the same models and structs. The two
// sides alternate inside each iteration (A, B, B, A, …) so machine drift hits both; each iteration
// records both times and the ratio JSON/MessagePack (above 100% means MessagePack is faster).

/// The `@Resource` model the resources benchmark uses.
@Resource(name: "train")
final class FormatTrain {
    var company: String = ""
    var numberOfCars: Int = 0
    var maxSpeed: Double = 0
    var inService: Bool = false
    var builtAt: Date?
    var tags: [String] = []
    var depot: BenchDepot?
    var conductorId: Int?
    var notes: String = ""
}

let benchmarks: @Sendable () -> Void = {
    let clock = ContinuousClock()
    let configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
    let packed: Data = {
        guard let tree = try? JSONParser().parse(Payload.trains) else { return Data() }
        return MessagePackWriter.serialize(tree)
    }()

    /// Runs both sides interleaved and records their times and the ratio json/packed.
    func paired(
        _ name: String, _ labels: (String, String), setUp: @escaping () throws -> Void = {},
        json: @escaping () throws -> Int, messagePack: @escaping () throws -> Int
    ) {
        let metrics = [metric("\(labels.0) (ms)"), metric("\(labels.1) (ms)"), metric("ratio JSON/MessagePack (%)")]
        Benchmark(
            name,
            configuration: .init(metrics: metrics, warmupIterations: 2, maxDuration: .seconds(40), maxIterations: 30)
        ) { benchmark in
            precondition(Payload.trains.count > 1_000_000 && packed.count > 1_000_000, "no payload")
            for iteration in benchmark.scaledIterations {
                var times = [Duration.zero, Duration.zero]
                for side in iteration % 2 == 0 ? [0, 1] : [1, 0] {
                    try setUp()
                    let start = clock.now
                    blackHole(side == 0 ? try json() : try messagePack())
                    times[side] = clock.now - start
                }
                benchmark.measurement(metrics[0], microseconds(times[0]) / 1000)
                benchmark.measurement(metrics[1], microseconds(times[1]) / 1000)
                benchmark.measurement(metrics[2], microseconds(times[0]) * 100 / max(1, microseconds(times[1])))
            }
        }
    }

    // A fresh store for each side, and the instances kept until the next set-up, as the resources
    // benchmark keeps them: what is timed is decoding and merging, not freeing 10,000 instances.
    var store = ResourceStore(configuration: configuration)
    var kept: [FormatTrain] = []
    paired(
        "decode 10k into @Resource models (new instances): JSON vs MessagePack", ("JSON", "MessagePack"),
        setUp: {
            kept = []
            store = ResourceStore(configuration: configuration)
        },
        json: {
            kept = try FormatTrain.merge(listBody: Payload.trains, in: store)
            return kept.count
        },
        messagePack: {
            kept = try FormatTrain.merge(listBody: packed, contentType: "application/x-msgpack", in: store)
            return kept.count
        })

    let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
    paired(
        "decode 10k into structs: JSONDecoder vs MessagePackDecoder", ("JSONDecoder", "MessagePackDecoder"),
        json: { try jsonDecoder.decode(BenchTrainsRoot.self, from: Payload.trains).trains.count },
        messagePack: { try MessagePackDecoder().decode(BenchTrainsRoot.self, from: packed).trains.count })

    paired(
        "parse 10k: JSONParser vs MessagePackReader, same tree", ("JSONParser", "MessagePackReader"),
        json: { (try JSONParser().parse(Payload.trains)["trains"]?.arrayValue?.count) ?? 0 },
        messagePack: { (try MessagePackReader().readJSON(packed)["trains"]?.arrayValue?.count) ?? 0 })

    readerThroughput()

    let trains = (try? jsonDecoder.decode(BenchTrainsRoot.self, from: Payload.trains).trains) ?? []
    let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
    paired(
        "encode 10k structs: JSONEncoder vs MessagePackEncoder", ("JSONEncoder", "MessagePackEncoder"),
        json: { try jsonEncoder.encode(trains).count },
        messagePack: { try MessagePackEncoder().encode(trains).count })
}

/// Reads nothing: decoding it costs what taping the text costs.
struct Unread: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// The JSON reader alone, in MB/s, on the 10,000-record payload and on JSONTestSuite's valid
/// documents (318 small texts of every shape): the check that builds nothing
/// (`JSONParser.validate`), the tape the `Codable` decoder reads (`ValueDecoder` into a type that
/// reads nothing), the parser's tree, and Foundation's `JSONSerialization` as the baseline.
let readerThroughput: @Sendable () -> Void = {
    let clock = ContinuousClock()
    let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/MonoRailClientTests/Fixtures/JSONTestSuite/test_parsing")
    let mix: [Data] = ((try? FileManager.default.contentsOfDirectory(atPath: suite.path)) ?? []).sorted()
        .filter { $0.hasPrefix("y_") }.compactMap { try? Data(contentsOf: suite.appendingPathComponent($0)) }
    let readers: [(String, (Data) throws -> Void)] = [
        ("check", { try JSONParser().validate($0) }),
        ("tape", { _ = try ValueDecoder().decode(Unread.self, from: $0) }),
        ("tree", { _ = try JSONParser().parse($0) }),
        ("JSONSerialization", { _ = try JSONSerialization.jsonObject(with: $0, options: [.fragmentsAllowed]) }),
    ]
    for (name, documents, rounds) in [("the 10k payload", [Payload.trains], 1), ("JSONTestSuite's y_ mix", mix, 400)] {
        let metrics =
            readers.map { metric("\($0.0) (MB/s)") } + [metric("ratio tape/JSONSerialization speed (%)")]
        Benchmark(
            "JSON reader throughput, \(name)",
            configuration: .init(metrics: metrics, warmupIterations: 2, maxDuration: .seconds(30), maxIterations: 20)
        ) { benchmark in
            precondition(documents.count > 1 && mix.count > 90 || documents[0].count > 1_000_000, "no payload")
            let bytes = documents.reduce(0) { $0 + $1.count } * rounds
            for _ in benchmark.scaledIterations {
                var speeds: [Int] = []
                for (_, read) in readers {
                    let start = clock.now
                    for _ in 0..<rounds {
                        for document in documents { try read(document) }
                    }
                    speeds.append(bytes / max(1, microseconds(clock.now - start)))
                }
                for (metric, speed) in zip(metrics, speeds) { benchmark.measurement(metric, speed) }
                benchmark.measurement(metrics[4], speeds[1] * 100 / max(1, speeds[3]))
            }
        }
    }
}
