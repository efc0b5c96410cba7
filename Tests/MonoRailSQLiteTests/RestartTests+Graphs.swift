import Foundation
import MonoRail
import MonoRailClient
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import Testing

/// Trains and cars as `monorail serve --conventions jsonapi` serves them.
enum Atomic {
    @Resource
    final class Train {
        var company: String?
        @Has var cars: [Car]
    }

    @Resource
    final class Car {
        var occupancy: Int?
        @References var train: Train?
    }
}

extension RestartTests {
    @Test("a graph whose answer was lost goes again whole after a restart, under its key: written once")
    func keptGraphAfterRestart() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("app.sqlite").path
            // The server writes the graph, and its answer arrives after the app stopped waiting.
            let lost = FaultInjection(slowResponses: ["/operations": .seconds(3)])
            try await withReferenceServer(schema: .trains, configuration: .init(envelope: .jsonAPI, faults: lost)) {
                harness in
                var configuration = harness.store.configuration
                configuration.conventions = .jsonAPI
                configuration.writePolicy = .queued
                configuration.timeout = .seconds(1)
                let storage = try SQLiteStorage(path: path)
                let store = ResourceStore(configuration: configuration, storage: storage)
                // A first answer says the server serves the atomic extension.
                _ = try await Atomic.Train.get(id: 1, in: store)
                store.outbox.isPaused = true
                let train = Atomic.Train()
                train.company = "Restart Rail"
                try await train.create(in: store)
                let car = Atomic.Car()
                car.occupancy = 3
                car.train = train
                try await car.create(in: store)
                car.occupancy = 4
                try await car.save()
                let key = try #require(store.outbox.pending.first?.idempotencyKey)

                _ = try? await store.outbox.flush()
                #expect(store.outbox.pending.map(\.batch) == [key, key, key])
                await store.outbox.pause()
                try await storage.flush()

                let (status, output) = try await Self.launchAgain(
                    "resendsKeptGraph", file: path, api: harness.server.baseURL)
                #expect(status == 0, "\(output)")
                #expect(output.contains("kept 3 writes in 1 graph, 0 left"), "\(output)")
                let posts = harness.server.journal.entries.filter { $0.hasPrefix("POST") || $0.hasPrefix("PATCH") }
                #expect(posts == ["POST /operations", "POST /operations"])
                // Written once: the second request was answered from the server's ledger.
                var reader = configuration
                reader.writePolicy = .direct
                let trains = try await Atomic.Train.get(in: ResourceStore(configuration: reader))
                let written = trains.filter { $0.company == "Restart Rail" }
                #expect(written.count == 1)
                let cars = try await written.first?.$cars.load()
                #expect(cars?.map(\.occupancy) == [4])
            }
        }
    }

    /// The second launch of ``keptGraphAfterRestart()``: the kept writes sent before any model is used.
    @Test(.enabled(if: secondLaunchFile != nil && secondLaunchAPI != nil))
    func resendsKeptGraph() async throws {
        let path = try #require(Self.secondLaunchFile)
        let storage = try SQLiteStorage(path: path)
        MonoRail.configure {
            $0.apiRootURL = Self.secondLaunchAPI
            $0.storage = storage
            $0.conventions = .jsonAPI
            $0.writePolicy = .queued
        }
        let outbox = ResourceStore.default.outbox
        try await outbox.load()
        let kept = outbox.pendingCount
        let graphs = Set(outbox.pending.compactMap(\.batch)).count
        try await outbox.flush()
        print("kept \(kept) writes in \(graphs) graph, \(outbox.pendingCount) left")
        try await storage.flush()
    }
}
