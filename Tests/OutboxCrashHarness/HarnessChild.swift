import Foundation
import Logging
import MonoRail
import MonoRailSQLite

/// One launch of the app under test: it queues the script's writes while the server cannot be
/// reached, then sends them, and may be killed at any moment of either. Started again on the same
/// file, it carries on from what the file holds.
struct HarnessChild {
    let database: String
    let server: URL
    let script: HarnessScript
    /// Exists once every write was queued: from then on the launch only sends.
    let queuedMarker: String

    /// Where nothing listens: the first phase queues with no way to send.
    static let unreachable = URL(string: "http://127.0.0.1:1")

    func run() async throws {
        let queued = FileManager.default.fileExists(atPath: queuedMarker)
        var configuration = MonoRail.Configuration(apiRootURL: queued ? server : Self.unreachable)
        configuration.writePolicy = .queued
        configuration.models.register(HarnessTrain.self, HarnessCar.self)
        var quiet = Logger(label: "outbox-crash-harness")
        quiet.logLevel = .critical
        configuration.logger = quiet
        let store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: database))
        if !queued {
            try await queue(in: store)
            _ = FileManager.default.createFile(atPath: queuedMarker, contents: Data())
            store.configure { $0.apiRootURL = server }
        }
        while true {
            do {
                try await store.outbox.flush()
                if store.outbox.pendingCount == 0 { return }
            } catch {
                // Injected 503s and dropped answers: the outbox tries again; so does this loop.
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Queues the steps not queued yet. Nothing was sent in this phase, so the kept writes are
    /// exactly the steps already queued, in order: step `k` is kept write `k`.
    private func queue(in store: ResourceStore) async throws {
        try await store.outbox.load()
        let kept = store.outbox.pending
        var trains: [Int: HarnessTrain] = [:]
        var cars: [Int: HarnessCar] = [:]
        for (step, write) in zip(script.steps, kept) {
            guard let id = write.id else { continue }
            switch step {
            case .createTrain(let train): trains[train] = store.instance(of: HarnessTrain.self, id: id)
            case .createCar(let car, _, _): cars[car] = store.instance(of: HarnessCar.self, id: id)
            default: break
            }
        }
        for step in script.steps.dropFirst(kept.count) {
            switch step {
            case .createTrain(let number):
                let train = HarnessTrain()
                train.company = script.company(number)
                try await train.create(in: store)
                trains[number] = train
            case .createCar(let number, let train, let occupancy):
                let car = HarnessCar()
                car.train = trains[train]
                car.occupancy = occupancy
                try await car.create(in: store)
                cars[number] = car
            case .updateTrain(let number, let count):
                guard let train = trains[number] else { throw HarnessError("train \(number) was not restored") }
                train.numberOfCars = count
                try await train.save()
            case .updateCar(let number, let occupancy):
                guard let car = cars[number] else { throw HarnessError("car \(number) was not restored") }
                car.occupancy = occupancy
                try await car.save()
            case .deleteCar(let number):
                guard let car = cars[number] else { throw HarnessError("car \(number) was not restored") }
                try await car.delete()
            }
        }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
