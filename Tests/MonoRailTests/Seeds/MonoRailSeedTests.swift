import Foundation
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

@testable import MonoRail

/// MonoRail's first README, from its models to "Relationships are Persisted too", against the
/// reference server: its `Car`, `Conductor` and `Train` are ``Spec``'s.
@Suite("MonoRail's README, word for word", .timeLimit(.minutes(5)))
struct MonoRailSeedTests {
    @Test("\"Thats it\": a train with its embedded cars")
    func thatsIt() async throws {
        try await withHarness { harness in
            let train = try await Spec.Train.get(id: 1, in: harness.store)
            #expect(train.cars.map(\.occupancy) == [40, 12])
            #expect(harness.journal.count == 1)
        }
    }

    @Test("application-wide persistence: one instance per record, saved changes seen by every holder")
    func persistence() async throws {
        try await withHarness { harness in
            let train = try await Spec.Train.get(id: 1, in: harness.store)
            let anotherTrain = try await Spec.Train.get(id: 1, in: harness.store)
            #expect(anotherTrain.maxSpeed == 46.8)
            train.maxSpeed = 55.5
            try await train.save()
            #expect(anotherTrain.maxSpeed == 55.5)
            #expect(anotherTrain === train)
        }
    }

    @Test("relationships are persisted too: the conductor moves, trainB.conductor === bill")
    func relationshipsPersisted() async throws {
        try await withHarness { harness in
            let trainA = try await Spec.Train.get(id: 1, in: harness.store)
            let trainB = try await Spec.Train.get(id: 2, in: harness.store)
            let bill = try #require(trainA.conductor)
            bill.train = trainB
            try await bill.save()
            #expect(trainA.conductor?.name == nil)
            #expect(trainB.conductor?.name == "Bill")
            #expect(trainB.conductor === bill)
            // The server agrees, read raw.
            #expect(try harness.server.store.find("conductors", id: "1")?["train_id"] == 2)
        }
    }

    @Test("References(Resource.Many): Rails' train_ids by default, the seed's related_models one option away")
    func referencesManyKey() async throws {
        try await withHarness(schema: ServerSchema.trainsEmbeddedInCars) { harness in
            let depot = TrainDepot()
            depot.trains = try await Seed.Train.get(in: harness.store)
            try await depot.create(in: harness.store)
            let id = try #require(depot.id)
            let stored = try #require(try harness.server.store.find("depots", id: id.description))
            #expect(stored["train_ids"] == [1, 2])
        }
        let seedStyle = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        seedStyle.configure { $0.conventions.referenceIDsKey = .name }
        #expect(seedStyle.setup(for: TrainDepot.self).wireKeys.contains("trains"))
    }

    @Test("the failure block receives an ActiveNetworkError: domain, code and data")
    func activeNetworkError() async throws {
        try await withHarness { harness in
            let store = harness.store
            let error = await withCheckedContinuation { (done: CheckedContinuation<ActiveNetworkError?, Never>) in
                Spec.Train.get(
                    id: 404, in: store,
                    success: { (_: Spec.Train) in done.resume(returning: nil) },
                    failure: { (error: ActiveNetworkError) in done.resume(returning: error) })
            }
            let failure = try #require(error)
            #expect(failure.domain == "Not Found")
            #expect(failure.code == 404)
            #expect(failure.data?["error"] != nil)
            #expect(failure.error.code == .httpStatus)
            // An untyped closure still gets the APIError.
            let untyped = await withCheckedContinuation { (done: CheckedContinuation<APIError.Code?, Never>) in
                Spec.Train.get(
                    id: 404, in: store, success: { _ in done.resume(returning: nil) },
                    failure: { error in done.resume(returning: error.code) })
            }
            #expect(untyped == .httpStatus)
        }
        // No response: the code's name and no status.
        let offline = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let error = await withCheckedContinuation { (done: CheckedContinuation<ActiveNetworkError?, Never>) in
            Spec.Train.get(
                id: 1, in: offline, success: { (_: Spec.Train) in done.resume(returning: nil) },
                failure: { (error: ActiveNetworkError) in done.resume(returning: error) })
        }
        #expect(error?.domain == "cannotConnect")
        #expect(error?.code == 0)
        #expect(error?.data == nil)
    }

    @Test("customSerialize's dictionary is converted to URL (GET) parameters, as to JSON for a write")
    func customSerializeParameters() async throws {
        try await withHarness { harness in
            let store = harness.store
            let found = try await OperatorTrain.get(where: ["operator": "Deutsche Bahn AG"], in: store)
            #expect(harness.journal.entries.last == "GET /trains?company=Deutsche%20Bahn%20AG")
            #expect(found.map(\.id) == [2])
            // The hook sees every read's parameters, each with its verb.
            _ = try await OperatorTrain.get(id: 1, parameters: ["operator": "ignored"], in: store)
            #expect(harness.journal.entries.last == "GET /trains/1?company=ignored")
            // What cannot be parameters is refused before a request.
            let before = harness.journal.count
            let refused = await #expect(throws: APIError.self) {
                _ = try await OperatorTrain.get(where: ["unsendable": true], in: store)
            }
            #expect(refused?.code == .encodingFailed)
            #expect(refused?.message.contains("OperatorTrain.customSerialize(_:for: .index) returned an array") == true)
            #expect(harness.journal.count == before)
        }
    }
}

/// The seed's `customSerialize(model:action:)` for a read: the app's `operator` is the server's
/// `company`.
@Resource(name: "train")
final class OperatorTrain {
    var company: String?

    static func customSerialize(_ record: JSONValue, for verb: ActionVerb) throws -> JSONValue {
        guard case .object(var object) = record else { return record }
        if object["unsendable"] != nil { return [record] }
        if let name = object.removeValue(forKey: "operator") { object["company"] = name }
        return .object(object)
    }
}
