import BenchSupport
import Benchmark
import Foundation
import MonoRail
import MonoRailAsyncHTTPClient

// A small GET as an app makes it: `Train.get(id: 1)` with the README's models against the raw
// transport + `JSONDecoder` into plain structs, both talking to the reference server in a process of
// its own (RoundTripServer, started here) so that neither side's CPU time is charged to the other.
// `GET /trains/1` answers the train with its cars and conductor embedded. Each round makes 200
// requests a side, the sides taking turns request by request; `APIClient.get` into the same structs
// runs beside them to show which layer a difference comes from.
//
// Build the server first: `swift build -c release --product RoundTripServer`.

@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
    @Has(.embedsMany) var cars: [Car]
    @Has(.embedsOne) var conductor: Conductor?
}

@Resource
final class Car {
    var occupancy: Int?
    var needsRepairs: Bool?
    @References var train: Train?
}

@Resource
final class Conductor {
    var name: String?
    @References var train: Train?
}

/// The same records as plain structs, for the baselines.
struct PlainTrain: Decodable {
    var id: Int
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool
    var cars: [PlainCar]
    var conductor: PlainConductor?

    enum CodingKeys: String, CodingKey {
        case id, company, cars, conductor
        case numberOfCars = "number_of_cars"
        case maxSpeed = "max_speed"
        case inService = "in_service"
    }
}

struct PlainCar: Decodable {
    var id: Int
    var occupancy: Int?
    var needsRepairs: Bool?
    var trainID: Int?

    enum CodingKeys: String, CodingKey {
        case id, occupancy
        case needsRepairs = "needs_repairs"
        case trainID = "train_id"
    }
}

struct PlainConductor: Decodable {
    var id: Int
    var name: String?
    var trainID: Int?

    enum CodingKeys: String, CodingKey {
        case id, name
        case trainID = "train_id"
    }
}

struct TrainRoot: Decodable {
    var train: PlainTrain
}

/// The server process, started once per benchmark run.
let sharedServer = Result { try ServerProcess.start() }

let benchmarks: @Sendable () -> Void = {
    let rawDecoder = JSONDecoder()
    let clock = ContinuousClock()
    let metrics = [
        metric("raw p50 (µs)"), metric("Train.get p50 (µs)"), metric("ratio Train.get/raw p50 (%)"),
        metric("APIClient.get p50 (µs)"), metric("ratio APIClient.get/raw p50 (%)"),
    ]
    Benchmark(
        "small GET /trains/1, server in another process, paired",
        configuration: .init(metrics: metrics, warmupIterations: 1, maxDuration: .seconds(120), maxIterations: 15)
    ) { benchmark in
        let server = try sharedServer.get()
        let root = URL(string: "http://127.0.0.1:\(server.port)")!
        let transport = AsyncHTTPClientTransport()
        let request = HTTPRequest(
            method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/trains/1",
            headerFields: [.accept: "application/json"])
        let store = ResourceStore(configuration: .init(apiRootURL: root))
        let client = APIClient(baseURL: root, transport: AsyncHTTPClientTransport())
        // The app holds the instance, so each answer merges into it, as in an app.
        var held: Train?
        for _ in benchmark.scaledIterations {
            var raw: [Int] = []
            var model: [Int] = []
            var api: [Int] = []
            for round in 0..<200 {
                for side in [0, 1, 2].shifted(by: round % 3) {
                    let start = clock.now
                    switch side {
                    case 0:
                        let (_, body) = try await transport.send(request, body: nil, metadata: RequestMetadata())
                        blackHole(try rawDecoder.decode(TrainRoot.self, from: body))
                        raw.append(microseconds(clock.now - start))
                    case 1:
                        held = try await Train.get(id: 1, in: store)
                        model.append(microseconds(clock.now - start))
                    default:
                        blackHole(try await client.get("/trains/1", as: PlainTrain.self, root: "train"))
                        api.append(microseconds(clock.now - start))
                    }
                }
            }
            blackHole(held)
            benchmark.measurement(metrics[0], median(raw))
            benchmark.measurement(metrics[1], median(model))
            benchmark.measurement(metrics[2], median(model) * 100 / max(1, median(raw)))
            benchmark.measurement(metrics[3], median(api))
            benchmark.measurement(metrics[4], median(api) * 100 / max(1, median(raw)))
        }
    }
}
