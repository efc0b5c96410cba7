import ArgumentParser
import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTransport
import Observation

/// `monorail demo`: the README's story, run against a reference server started in-process.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the reference server in-process and walk through MonoRail's models against it.")

    @Flag(help: "Show the span trees of one read and one offline write instead of the walkthrough.")
    var trace = false

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("monorail-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        if trace { return try await TraceWalkthrough(directory: directory).run() }
        let database = directory.appendingPathComponent("demo.sqlite").path
        let server = try await ReferenceServer(
            schema: .trains,
            configuration: .init(host: "127.0.0.1", port: 0, databasePath: database, uploadsDirectory: directory)
        ).start()
        var walkthrough = Walkthrough(
            server: server, database: database, directory: directory)
        do {
            try await walkthrough.run()
        } catch {
            await walkthrough.server.stop()
            throw error
        }
        await walkthrough.server.stop()
    }
}

/// The steps of the demo, each printing what it did and the requests it made.
struct Walkthrough {
    /// The server; replaced when the demo restarts it.
    private(set) var server: RunningReferenceServer
    let database: String
    let cacheDirectory: URL
    /// The app's record cache, which survives the app's restart.
    let storagePath: String
    private var seen = 0

    init(server: RunningReferenceServer, database: String, directory: URL) {
        self.server = server
        self.database = database
        self.cacheDirectory = directory.appendingPathComponent("file-cache")
        self.storagePath = directory.appendingPathComponent("app/records.sqlite").path
    }

    mutating func run() async throws {
        MonoRail.register(apiRootURL: server.baseURL)
        let storage = try SQLiteStorage(path: storagePath)
        MonoRail.configure { $0.storage = storage }
        print("MonoRail demo")
        print("Reference server: \(server.baseURL.absoluteString) (SQLite: \(database))")
        print("The app keeps its records in \(storagePath)")

        let train = try await oneRecord()
        let (trainA, trainB) = try await relationships()
        try await upload(to: trainB)
        try await messagePack(sameAs: trainA)
        try await refusedAndDeleted(train)
        try await offline(storage)
        try await offlineWrites()
        try await liveList()
        try await relationshipList()
        try await liveFromTheServer()

        print("")
        print("Done.")
    }

    /// Steps 1 to 5: create, get, save, one instance per record, a list merged into it.
    private mutating func oneRecord() async throws -> Train {
        step(1, "Create a train")
        let train = Train()
        train.company = "MonoRail Demo Co."
        train.numberOfCars = 4
        try await train.create()
        show("train.id", train.id?.description ?? "nil")
        requests()

        step(2, "Get it back by id: the same instance comes back")
        let sameTrain = try await Train.get(id: train.id ?? 0)
        show("sameTrain === train", "\(sameTrain === train)")
        show("sameTrain.company", sameTrain.company ?? "nil")
        requests()

        step(3, "Change a field and save")
        train.maxSpeed = 46.8
        show("train.hasChanges before save", "\(train.hasChanges)")
        try await train.save()
        show("train.hasChanges after save", "\(train.hasChanges)")
        requests()

        step(4, "Two get(id: 1) calls share one instance")
        let first = try await Train.get(id: 1)
        let second = try await Train.get(id: 1)
        show("first === second", "\(first === second)")
        show("first.company", first.company ?? "nil")
        show("first.maxSpeed", first.maxSpeed.map { "\($0)" } ?? "nil")
        requests()

        step(5, "The server changes train 1; a list fetch merges it into the instance everyone holds")
        if let trains = server.store.schema.resource(plural: "trains") {
            _ = try server.store.update(trains, id: "1", attributes: ["max_speed": 55.5])
        }
        print("   (max_speed set to 55.5 directly in the server's database)")
        first.company = "Edited, not saved"
        let all = try await Train.get()
        show("Train.get() returned", "\(all.count) trains")
        show("second.maxSpeed (server value wins)", second.maxSpeed.map { "\($0)" } ?? "nil")
        show("second.company (unsaved edit kept)", second.company ?? "nil")
        first.revert()
        show("after revert(), second.company", second.company ?? "nil")
        requests()
        return train
    }

    /// Steps 6 and 7: embedded relationships as shared instances, and a reference moved.
    private mutating func relationships() async throws -> (Train, Train) {
        step(6, "Relationships: cars and the conductor arrive embedded, as shared instances")
        let trainA = try await Train.get(id: 1)
        let trainB = try await Train.get(id: 2)
        show("trainA.cars occupancy", trainA.cars.map { $0.occupancy.map { "\($0)" } ?? "nil" }.joined(separator: ", "))
        show("trainA.cars[0].train === trainA", "\(trainA.cars.first?.train === trainA)")
        show("trainA.conductor", trainA.conductor?.name ?? "nil")
        show("trainB.conductor", trainB.conductor?.name ?? "nil")
        requests()

        step(7, "The conductor moves to train 2: both trains follow, with one request")
        if let conductor = trainA.conductor {
            conductor.train = trainB
            try await conductor.save()
        }
        show("trainA.conductor", trainA.conductor?.name ?? "nil")
        show("trainB.conductor", trainB.conductor?.name ?? "nil")
        requests()
        return (trainA, trainB)
    }

    /// Step 8: a photo uploaded as multipart/form-data, downloaded through the file cache.
    private mutating func upload(to trainB: Train) async throws {
        step(8, "Upload a photo: a model holding a FileUpload is sent as multipart/form-data")
        if let conductor = trainB.conductor {
            var bytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            bytes.append(Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
            conductor.photo = FileUpload(fileName: "bill.png", mimeType: "image/png", data: bytes)
            let progress = UploadProgressLine()
            try await conductor.save(uploadProgress: { progress.update($0) })
            show("upload progress", progress.text)
            show(
                "request Content-Type",
                server.journal.requests.last?.contentType?.split(separator: ";").first.map(String.init) ?? "nil")
            show(
                "conductor.photo",
                conductor.photo.map { "\($0.fileName), \($0.size ?? 0) bytes at \($0.remoteURL?.path ?? "?")" } ?? "nil"
            )
            requests()

            print("   The file cache keeps the download and revalidates it with its ETag:")
            if let path = conductor.photo?.remoteURL?.path {
                let api = APIClient(baseURL: server.baseURL, transport: MonoRail.defaultTransport)
                let cache = try FileCache(directory: cacheDirectory, maxBytes: 10 << 20)
                let downloaded = try await cache.data(from: APIPath(verbatim: path), using: api)
                let again = try await cache.data(from: APIPath(verbatim: path), using: api)
                show("downloaded == uploaded", "\(downloaded == bytes && again == bytes)")
                show("cache", "\(cache.count) file, \(cache.totalBytes) bytes")
            }
            requests()
        }
    }

    /// Step 9: the same record in MessagePack merges into the same instance.
    private mutating func messagePack(sameAs trainA: Train) async throws {
        step(9, "Fetch in MessagePack: the same models, the same instances")
        MonoRail.configure { $0.format = .messagePack }
        let packed = try await Train.get(id: 1)
        show("packed === trainA", "\(packed === trainA)")
        show(
            "response Accept asked for",
            server.journal.requests.last?.accept?.split(separator: ",").first.map(String.init) ?? "nil")
        show("packed.maxSpeed", packed.maxSpeed.map { "\($0)" } ?? "nil")
        MonoRail.configure { $0.format = .json }
        requests()
    }

    /// Steps 10 and 11: a validation error, typed, and a delete.
    private mutating func refusedAndDeleted(_ train: Train) async throws {
        step(10, "A validation error comes back typed, and local edits survive it")
        let nameless = Train()
        nameless.numberOfCars = 2
        do {
            try await nameless.create()
            print("   unexpected: the server accepted a train without a company")
        } catch let error as APIError where error.code == .validationFailed {
            show("error.statusCode", error.statusCode.map { "\($0)" } ?? "nil")
            show("error.errors[\"company\"]", quoted(error.errors["company"]))
            show("error.errors.fullMessages", quoted(error.errors.fullMessages))
            show("nameless.numberOfCars (kept)", nameless.numberOfCars.map { "\($0)" } ?? "nil")
        }
        requests()

        step(11, "Delete")
        let id = train.id ?? 0
        try await train.delete()
        show("train.isDeleted", "\(train.isDeleted)")
        do {
            _ = try await Train.get(id: id)
        } catch let error as APIError {
            show("Train.get(id: \(id))", "\(error.statusCode.map { "\($0)" } ?? "?") \(error.domain ?? "")")
        }
        requests()
    }

    /// Steps 12 and 13: the app restarts with the server gone, then the server comes back.
    private mutating func offline(_ storage: SQLiteStorage) async throws {
        step(12, "The app restarts with the server stopped: the trains come from the SQLite file")
        // What an app does as it quits: the last answers are on disk.
        try await storage.flush()
        let port = server.port
        await server.stop()
        print("   (server stopped; a new store opens the same file)")
        let restarted = ResourceStore(
            configuration: MonoRail.configuration, storage: try SQLiteStorage(path: storagePath))
        let offline = try await Train.response(policy: .networkFirst, in: restarted)
        show("Train.get(policy: .networkFirst) source", "\(offline.source)")
        show("trains", offline.value.map { "\($0.id?.description ?? "?") \($0.company ?? "")" }.joined(separator: ", "))
        let cached = try await Train.get(id: 1, policy: .cacheOnly, in: restarted)
        show("Train.get(id: 1, policy: .cacheOnly).maxSpeed", cached.maxSpeed.map { "\($0)" } ?? "nil")
        show("cached.cars occupancy", cached.cars.map { $0.occupancy.map { "\($0)" } ?? "nil" }.joined(separator: ", "))

        step(13, "The server is back: stale-while-revalidate answers from the file now, the network after")
        server = try await ReferenceServer(
            schema: .trains,
            configuration: .init(
                host: "127.0.0.1", port: port, databasePath: database,
                faults: FaultInjection(latency: .milliseconds(300)))
        ).start()
        seen = 0
        if let trains = server.store.schema.resource(plural: "trains") {
            _ = try server.store.update(trains, id: "1", attributes: ["max_speed": 61.0])
        }
        print("   (server restarted on the same database, 300 ms away; max_speed of train 1 set to 61.0 there)")
        let answer = try await Train.response(id: 1, policy: .staleWhileRevalidate, in: restarted)
        show("answer.source", "\(answer.source)")
        show("maxSpeed at once (cached)", answer.value.maxSpeed.map { "\($0)" } ?? "nil")
        try await answer.revalidation?.value
        show("maxSpeed after the revalidation", answer.value.maxSpeed.map { "\($0)" } ?? "nil")
        show("the same instance", "\(answer.value === cached)")
        requests()
    }

    /// Step 14: writes made with the server gone are kept, survive a restart, and are sent once.
    private mutating func offlineWrites() async throws {
        step(14, "Offline writes: kept in the outbox, through a restart, sent once each when the server is back")
        let port = server.port
        await server.stop()
        print("   (server stopped again; the app keeps writes it cannot send: writePolicy = .queuedWhenOffline)")
        var configuration = MonoRail.configuration
        configuration.writePolicy = .queuedWhenOffline
        configuration.models.register(Train.self, Car.self)
        try await writeWhileOffline(configuration)
        print("   (the app quits; a new store opens the same file)")
        let store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: storagePath))
        try await store.outbox.load()
        show("after the restart, outbox.pendingCount", "\(store.outbox.pendingCount)")
        let train = try await Train.get(id: 1, policy: .cacheOnly, in: store)
        show("train.maxSpeed (kept, pending)", "\(train.maxSpeed.map { "\($0)" } ?? "nil"), \(train.hasPendingChanges)")
        let line = store.outbox.pending.compactMap(\.id).first { $0.isLocal }.flatMap {
            store.instance(of: Train.self, id: $0)
        }
        server = try await ReferenceServer(
            schema: .trains, configuration: .init(host: "127.0.0.1", port: port, databasePath: database)
        ).start()
        seen = 0
        print("   (server back)")
        try await store.outbox.flush()
        requests()
        show("outbox.pendingCount", "\(store.outbox.pendingCount)")
        show("train.hasPendingChanges", "\(train.hasPendingChanges)")
        show("line.id", line?.id?.description ?? "nil")
        if let cars = server.store.schema.resource(plural: "cars"), let lineID = line?.id {
            let onLine = try server.store.list(cars, filters: ["train_id": lineID.description]).records
            show(
                "the line's cars on the server (occupancy)", onLine.compactMap { $0["occupancy"]?.intValue }.description
            )
        }
        show("writes in the server's Idempotency-Key ledger", "\(try server.store.idempotencyLedger().count)")
    }

    /// Step 14's writes, made with the server stopped and kept in the outbox; then the app quits.
    private mutating func writeWhileOffline(_ configuration: MonoRail.Configuration) async throws {
        let store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: storagePath))
        let train = try await Train.get(id: 1, policy: .cacheOnly, in: store)
        train.maxSpeed = 80
        try await train.save()
        let line = Train()
        line.company = "Night Line"
        try await line.create(in: store)
        let car = Car()
        car.train = line
        car.occupancy = 6
        try await car.create(in: store)
        show("train.maxSpeed", train.maxSpeed.map { "\($0)" } ?? "nil")
        show("train.pendingChanges", "\(train.pendingChanges.keys.sorted())")
        show("line.id (local until the server answers)", line.id?.isLocal == true ? "local" : "server")
        show("outbox.pendingCount", "\(store.outbox.pendingCount)")
        // A real app's process ends here. In this one, the old store, still holding its kept
        // writes, must not send them beside the new one: not even the attempt it may be making.
        await store.outbox.pause()
    }

    /// Step 15: a live query follows the server's changes as other responses bring them, and pages.
    private mutating func liveList() async throws {
        step(15, "A live list: it pages, and follows the server's changes with no request of its own")
        let store = ResourceStore(configuration: MonoRail.configuration)
        func describe(_ trains: [Train]) -> String {
            trains.map { "\($0.id?.description ?? "?") \($0.company ?? "") \($0.maxSpeed.map { "\($0)" } ?? "nil")" }
                .joined(separator: ", ")
        }
        let fast = try await Train.query(
            where: ["max_speed": .atLeast(50)], order: [.descending("max_speed")], pageSize: 1, in: store)
        show("fast.records", describe(fast.instances))
        show("fast.total, fast.hasNextPage", "\(fast.total.map { "\($0)" } ?? "nil"), \(fast.hasNextPage)")
        try await fast.loadNextPage()
        show("after loadNextPage()", describe(fast.instances))
        requests()
        if let trains = server.store.schema.resource(plural: "trains") {
            _ = try server.store.update(trains, id: "2", attributes: ["max_speed": 40])
            _ = try server.store.create(
                trains, attributes: ["company": "Express", "max_speed": 200, "in_service": true])
        }
        print("   (on the server: train 2 slowed to 40 km/h; another client added Express at 200 km/h)")
        _ = try await Train.get(in: store)
        print("   (another screen of the app lists every train)")
        show("fast.records", describe(fast.instances))
        show("fast.total", fast.total.map { "\($0)" } ?? "nil")
        requests()
    }

    /// Step 16: a screen showing a train's cars is told when another creates one: Observation of a
    /// relationship, with no request of its own.
    private mutating func relationshipList() async throws {
        step(16, "A screen lists a train's cars; another screen adds one: the list is told, with no request")
        let store = ResourceStore(configuration: MonoRail.configuration)
        func occupancies(_ cars: [Car]) -> String {
            cars.map { $0.occupancy.map { "\($0)" } ?? "nil" }.joined(separator: ", ")
        }
        let train = try await Train.get(id: 2, in: store)
        show("train.cars (occupancy)", occupancies(train.cars))
        requests()
        let told = Locked(false)
        withObservationTracking {
            _ = train.cars
        } onChange: {
            told.withLock { $0 = true }
        }
        print("   (the list screen reads train.cars inside withObservationTracking, as SwiftUI does)")
        let car = Car()
        car.occupancy = 24
        car.train = train
        try await car.create(in: store)
        print("   (the other screen created a car of train 2)")
        show("the list was told", "\(told.withLock { $0 })")
        show("train.cars (occupancy)", occupancies(train.cars))
        requests()
    }

    /// Step 17: another client's changes arrive in a live list by the server's change stream, with no
    /// request of the app's, through a restart of the server.
    private mutating func liveFromTheServer() async throws {
        step(17, "Live from the server: another client's changes arrive by themselves, through a server restart")
        var configuration = MonoRail.configuration
        configuration.liveUpdates = .serverSentEvents(path: "/changes")
        configuration.liveUpdates?.reconnectDelay = .milliseconds(100)
        let store = ResourceStore(configuration: configuration)
        let other = ResourceStore(configuration: MonoRail.configuration)
        func describe(_ trains: [Train]) -> String {
            trains.map { "\($0.id?.description ?? "?") \($0.company ?? "")" }.joined(separator: ", ")
        }
        let all = try await Train.query(order: [.ascending("id")], in: store)
        try await store.liveUpdates.connect()
        show("all.records", describe(all.instances))
        show("liveUpdates.state", "\(store.liveUpdates.state)")
        print("   (a first stream starts from now: what the app read before it is read once more)")
        requests()
        let created = Train()
        created.company = "Pushed Line"
        try await created.create(in: other)
        print("   (another client created Pushed Line)")
        try await waitFor { all.instances.contains { $0.company == "Pushed Line" } }
        show("all.records", describe(all.instances))
        requests()

        let port = server.port
        await server.stop()
        print("   (server stopped: the stream waits to reconnect)")
        try await waitFor { if case .waiting = store.liveUpdates.state { true } else { false } }
        show("liveUpdates.state", "waiting")
        server = try await ReferenceServer(
            schema: .trains, configuration: .init(host: "127.0.0.1", port: port, databasePath: database)
        ).start()
        seen = 0
        let renamed = try await Train.get(id: created.id ?? 0, in: other)
        renamed.company = "Pushed Line, renamed after the restart"
        try await renamed.save()
        print("   (server back on the same database; the other client renamed the line)")
        try await waitFor { all.instances.contains { $0.company == "Pushed Line, renamed after the restart" } }
        show("liveUpdates.state", "\(store.liveUpdates.state)")
        show("all.records", describe(all.instances))
        show(
            "resumed with Last-Event-ID",
            server.journal.requests.first { $0.line == "GET /changes" }?.lastEventID ?? "none")
        requests()
        store.liveUpdates.disconnect()
    }

    /// Waits until `condition` holds, for at most 10 seconds.
    private func waitFor(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private func step(_ number: Int, _ title: String) {
        print("")
        print("\(number). \(title)")
    }

    private func quoted(_ messages: [String]) -> String {
        "[" + messages.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }

    private func show(_ label: String, _ value: String) {
        print("   \(label): \(value)")
    }

    private mutating func requests() {
        let entries = server.journal.requests
        for entry in entries.dropFirst(seen) {
            print("   → \(entry.line)" + (entry.ifNoneMatch.map { " (If-None-Match: \($0))" } ?? ""))
        }
        seen = entries.count
    }
}

/// Keeps the last upload progress report for printing.
final class UploadProgressLine: Sendable {
    private let last = Locked<TransferProgress?>(nil)

    func update(_ progress: TransferProgress) { last.withLock { $0 = progress } }

    var text: String {
        guard let progress = last.withLock({ $0 }) else { return "no report" }
        return "\(progress.completedBytes) of \(progress.totalBytes.map { "\($0)" } ?? "?") bytes sent"
    }
}
