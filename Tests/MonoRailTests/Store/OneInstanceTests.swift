import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// One instance per record whatever the order of answers: a create answered after its record came
/// another way (a push, a read after a lost answer) leaves the app's instance as the record's; a
/// create answered with a record the store held before is refused.
@Suite("One instance per record, whatever the order of answers", .timeLimit(.minutes(5)))
struct OneInstanceTests {
    @Test("a create answered with the id of a record already live (an upsert) is refused; nothing is merged")
    func upsertAnswer() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "Live"}}"#)
            server.respond(to: "POST /trains", status: 201, body: #"{"train": {"id": 1, "company": "Upserted"}}"#)
            let live = try await QueuedTrain.get(id: 1, in: store)
            let made = QueuedTrain()
            made.company = "Upserted"
            let error = await #expect(throws: APIError.self) { try await made.create(in: store) }
            #expect(error?.code == .inconsistentResponse)
            #expect(error?.message.contains("held before the create was sent") == true)
            #expect(live.company == "Live" && store.instance(of: QueuedTrain.self, id: 1) === live)
            #expect(made.id == nil && made.hasChanges)
        }
    }

    @Test("a pushed created that outruns the POST's answer: the app's instance is the record's, once in the list")
    func pushOutrunsAnswer() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            $0.liveUpdates = .serverSentEvents(path: "/changes")
            $0.transport = transport
        } _: { api in
            defer { api.store.liveUpdates.disconnect() }
            let all = try await Train.query(in: api.store)
            try await api.store.liveUpdates.connect()
            #expect(try await eventually { api.store.liveUpdates.state.isLive })
            transport.holdAnswers(to: "POST /trains", for: .milliseconds(1500))
            let train = Train()
            train.company = "Mine"
            let creating = Task { _ = try await train.create(in: api.store) }
            // The push of the record arrives first, and the live list shows it.
            #expect(try await eventually { all.instances.contains { $0.company == "Mine" } })
            let pushed = try #require(all.instances.first { $0.company == "Mine" })
            #expect(pushed !== train)
            try await creating.value
            let id = try #require(train.id)
            #expect(api.store.instance(of: Train.self, id: id) === train)
            #expect(pushed.isDeleted, "the duplicate is retired, its observers told")
            #expect(try await eventually { all.instances.filter { $0.id == id }.count == 1 })
            #expect(all.instances.contains { $0 === train })
            let again = try await Train.get(id: id, in: api.store)
            #expect(again === train)
        }
    }

    @Test(
        "a create answered after the push of its record's deletion: the app's instance takes the id and reads as deleted"
    )
    func deletedBeforeAnswer() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            $0.liveUpdates = .serverSentEvents(path: "/changes")
            $0.transport = transport
        } _: { api in
            defer { api.store.liveUpdates.disconnect() }
            try await api.store.liveUpdates.connect()
            #expect(try await eventually { api.store.liveUpdates.state.isLive })
            transport.holdAnswers(to: "POST /trains", for: .milliseconds(1500))
            let train = Train()
            train.company = "Short-lived"
            let creating = Task { _ = try await train.create(in: api.store) }
            // Another client deletes the record as soon as it is made; the push says so before the
            // create's answer arrives.
            let trains = try #require(ServerSchema.trains.resources.first)
            var made: Int?
            for _ in 0..<500 where made == nil {
                made = try api.server.store.list(trains, filters: ["company": "Short-lived"]).records.first?["id"]?
                    .intValue
                if made == nil { try await Task.sleep(for: .milliseconds(5)) }
            }
            let id = try #require(made)
            _ = try api.server.store.delete(trains, id: String(id))
            let deleted = try api.server.store.changeBounds().newest
            #expect(try await eventually { (api.store.liveUpdates.lastEventID.flatMap { Int64($0) } ?? 0) >= deleted })
            try await creating.value
            #expect(train.id == .int(Int64(id)))
            #expect(train.isDeleted, "the record the answer describes was deleted since")
            #expect(api.store.instance(of: Train.self, id: id) == nil)
            await #expect(throws: APIError.self) { try await Train.get(id: id, policy: .cacheOnly, in: api.store) }
        }
    }

    /// A create and a save of it kept, the create's answer lost after the server made the record, and
    /// the record brought in by a read before the outbox hears of it: the app's instance and the read one.
    static func createdThenRead(
        _ company: String, api: TestAPI, transport: FaultTransport
    ) async throws -> (made: QueuedTrain, read: QueuedTrain) {
        await api.store.outbox.pause()
        let made = QueuedTrain()
        made.company = company
        try await made.create(in: api.store)
        made.numberOfCars = 3
        try await made.save()
        transport.loseAnswers(to: "POST /trains")
        try? await api.store.outbox.flush()
        let read = try #require(try await QueuedTrain.get(in: api.store).first { $0.company == company })
        return (made, read)
    }

    @Test("a kept create whose answer was lost, its record read meanwhile: one instance, the app's; later writes sent")
    func lostAnswerThenRead() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            OutboxTests.queued(&$0)
            $0.transport = transport
        } _: { api in
            let outbox = api.store.outbox
            let (made, read) = try await Self.createdThenRead("Made Offline", api: api, transport: transport)
            #expect(read !== made)
            try await outbox.flush()
            #expect(outbox.pendingCount == 0 && outbox.parked.isEmpty)
            let id = try #require(made.id)
            #expect(!id.isLocal && read.id == id)
            #expect(api.store.instance(of: QueuedTrain.self, id: id) === made)
            #expect(read.isDeleted)
            let again = try await QueuedTrain.get(id: id, in: api.store)
            #expect(again === made)
            let stored = try api.server.store.find("trains", id: id.description)
            #expect(stored?["company"] == "Made Offline" && stored?["number_of_cars"] == 3)
            let trains = try #require(ServerSchema.trains.resources.first)
            let onServer = try api.server.store.list(trains, filters: ["company": "Made Offline"])
            #expect(onServer.total == 1, "created once")
        }
    }

    @Test(
        "a kept create whose answer was lost, its record read and saved meanwhile: the app's instance shows the save, whichever answer comes last",
        arguments: ["POST", "PUT"])
    func lostAnswerThenReadSaved(lateAnswer: String) async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            OutboxTests.queued(&$0)
            $0.transport = transport
        } _: { api in
            let outbox = api.store.outbox
            await outbox.pause()
            let made = QueuedTrain()
            made.company = "Made Offline"
            try await made.create(in: api.store)
            transport.loseAnswers(to: "POST /trains")
            try? await outbox.flush()
            let read = try #require(try await QueuedTrain.get(in: api.store).first { $0.company == "Made Offline" })
            let id = try #require(read.id)
            // The app renames the record it read. The save goes beside the create's resend (two records,
            // as far as the outbox knows); one of the two answers comes late. The resend's is the
            // server's replay of what it made, older than the save whenever it arrives.
            read.company = "Renamed"
            try await read.save()
            let line = lateAnswer == "POST" ? "POST /trains" : "PUT /trains/\(id)"
            transport.holdAnswers(to: line, for: .milliseconds(800))
            try await outbox.flush()

            #expect(outbox.pendingCount == 0 && outbox.parked.isEmpty)
            #expect(try api.server.store.find("trains", id: id.description)?["company"] == "Renamed")
            #expect(api.store.instance(of: QueuedTrain.self, id: id) === made)
            #expect(read.isDeleted)
            #expect(made.company == "Renamed", "the create's answer is older than the save it arrived after")
            #expect(!made.hasChanges)
        }
    }

    @Test(
        "a kept create whose answer was lost, its record read and deleted meanwhile, then gone on the server: the delete is done"
    )
    func lostAnswerThenReadDeletedGone() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            OutboxTests.queued(&$0)
            $0.transport = transport
            $0.outboxLimits.concurrentWrites = 1
        } _: { api in
            let outbox = api.store.outbox
            let (_, read) = try await Self.createdThenRead("Made, then gone", api: api, transport: transport)
            // The app deletes the record the read brought in.
            let id = try #require(read.id)
            try await read.delete()
            // Another client deletes it first: the save the create's answer names it in is answered 404.
            let trains = try #require(ServerSchema.trains.resources.first)
            #expect(try api.server.store.delete(trains, id: id.description))
            try await outbox.flush()

            #expect(outbox.pendingCount == 0 && outbox.parked.isEmpty)
            #expect(read.isDeleted && !read.hasPendingChanges, "the record is gone, as the app's delete asked")
            #expect(read.rejection == nil, "the delete was not refused: \(read.rejection?.message ?? "")")
            #expect(api.store.instance(of: QueuedTrain.self, id: id) == nil)
            let gone = await #expect(throws: APIError.self) { try await QueuedTrain.get(id: id, in: api.store) }
            #expect(gone?.statusCode == 404)
        }
    }

    @Test(
        "a kept delete sent before a create's answer named its record: the earlier write's 404 leaves it to its answer")
    func deleteInFlightWhenSaveGone() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            OutboxTests.queued(&$0)
            $0.transport = transport
        } _: { api in
            let outbox = api.store.outbox
            let (_, read) = try await Self.createdThenRead("Made, then deleted", api: api, transport: transport)
            let id = try #require(read.id)
            try await read.delete()
            // The delete goes beside the create's resend (two records, as far as the outbox knows) and
            // its answer comes late: the save, now of the same record, finds it gone meanwhile.
            transport.holdAnswers(to: "DELETE /trains/\(id)", for: .seconds(1))
            try await outbox.flush()

            #expect(outbox.pendingCount == 0 && outbox.parked.isEmpty)
            #expect(read.isDeleted && !read.hasPendingChanges)
            #expect(read.rejection == nil, "the delete was not refused: \(read.rejection?.message ?? "")")
            #expect(api.store.instance(of: QueuedTrain.self, id: id) == nil)
            #expect(try api.server.store.find("trains", id: id.description) == nil)
        }
    }

    /// An app launched twice on one SQLite file against the reference server, its writes queued and
    /// sent through `transport`: `first` runs in a store that then quits cleanly (its outbox paused,
    /// its storage flushed); `next` is given the next launch's store, its kept writes loaded and its
    /// outbox paused, what `first` returned, and the file's path.
    static func twoLaunches<Kept>(
        through transport: FaultTransport, versioned: Bool = true,
        first: (TestAPI, ResourceStore) async throws -> Kept,
        next: (TestAPI, ResourceStore, Kept, String) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            try await withHarness {
                OutboxTests.queued(&$0)
                $0.transport = transport
                // Without versions, the order the requests were sent in alone decides.
                if !versioned { $0.conventions.versionKey = nil }
            } _: { api in
                let kept: Kept
                do {
                    let store = ResourceStore(
                        configuration: api.store.configuration, storage: try SQLiteStorage(path: path))
                    await store.outbox.pause()
                    kept = try await first(api, store)
                    await store.outbox.pause()
                    try await store.configuration.storage?.flush()
                }
                let store = ResourceStore(
                    configuration: api.store.configuration, storage: try SQLiteStorage(path: path))
                await store.outbox.pause()
                try await store.outbox.load()
                try await next(api, store, kept, path)
            }
        }
    }

    /// Keeps a create of a record whose `company` is "Made Offline" in `store`'s outbox and sends it;
    /// the server makes the record and the answer is lost.
    static func keepCreateAnswerLost<Model: ResourceModel>(
        _ company: ReferenceWritableKeyPath<Model, String?>, in store: ResourceStore, through transport: FaultTransport
    ) async throws {
        let made = Model()
        made[keyPath: company] = "Made Offline"
        try await made.create(in: store)
        transport.loseAnswers(to: "POST /trains")
        try? await store.outbox.flush()
    }

    @Test(
        "a create an earlier launch kept, its answer lost, its record read before the resend: the read instance stays the record's"
    )
    func lostAnswerAcrossLaunches() async throws {
        let transport = FaultTransport.underTest()
        try await Self.twoLaunches(through: transport) { _, first in
            // The first launch keeps a create and a save of it; the server takes the create, and its
            // answer is lost.
            let made = QueuedTrain()
            made.company = "Made Offline"
            try await made.create(in: first)
            made.numberOfCars = 3
            try await made.save()
            transport.loseAnswers(to: "POST /trains")
            try? await first.outbox.flush()
        } next: { api, next, _, _ in
            // The next launch reads the record before its outbox sends the create again.
            let listed = try await QueuedTrain.get(in: next)
            let read = try #require(listed.first { $0.company == "Made Offline" })
            try await next.outbox.flush()
            #expect(next.outbox.pendingCount == 0 && next.outbox.parked.isEmpty)
            let id = try #require(read.id)
            #expect(!read.isDeleted, "the instance the app holds stays the record's")
            #expect(next.instance(of: QueuedTrain.self, id: id) === read)
            #expect(read.numberOfCars == 3, "the kept save's answer reaches it")
            let trains = try #require(ServerSchema.trains.resources.first)
            let onServer = try api.server.store.list(trains, filters: ["company": "Made Offline"])
            #expect(onServer.total == 1, "created once")
            #expect(onServer.records.first?["number_of_cars"] == 3)
        }
    }

    @Test(
        "a create an earlier launch kept, its answer lost, its record deleted by another client: the resend's replay does not bring it back"
    )
    func lostAnswerAcrossLaunchesDeleted() async throws {
        let transport = FaultTransport.underTest()
        try await Self.twoLaunches(through: transport) { api, first in
            try await Self.keepCreateAnswerLost(\QueuedTrain.company, in: first, through: transport)
            // The server made the record; another client deletes it.
            let trains = try #require(ServerSchema.trains.resources.first)
            let record = try #require(
                try api.server.store.list(trains, filters: ["company": "Made Offline"]).records.first)
            let id = try #require(record["id"]?.intValue)
            _ = try api.server.store.delete(trains, id: String(id))
            return id
        } next: { api, next, id, _ in
            // The next launch sends the create again (the app holds the instance the outbox made again);
            // the server answers with its replay of what it made.
            let made = try #require(next.instances(of: QueuedTrain.self).first { $0.company == "Made Offline" })
            try await next.outbox.flush()
            #expect(next.outbox.pendingCount == 0 && next.outbox.parked.isEmpty)
            #expect(made.id == .int(Int64(id)))
            #expect(made.isDeleted, "the record the replay describes is gone")
            #expect(next.instance(of: QueuedTrain.self, id: id) == nil)
            await #expect(throws: APIError.self) { try await QueuedTrain.get(id: id, policy: .cacheOnly, in: next) }
            #expect(api.journal.entries.suffix(2) == ["POST /trains", "GET /trains/\(id)"])
        }
    }

    @Test(
        "a save an earlier launch kept, its answer lost, its record deleted by another client since: the resend's replay does not bring it back"
    )
    func lostSaveAnswerAcrossLaunchesDeleted() async throws {
        let transport = FaultTransport.underTest()
        try await Self.twoLaunches(through: transport) { api, first in
            let train = try await QueuedTrain.get(id: 2, in: first)
            train.company = "Saved Offline"
            try await train.save()
            transport.loseAnswers(to: "PUT /trains/2")
            try? await first.outbox.flush()
            // The server took the save; another client deletes the record.
            let trains = try #require(ServerSchema.trains.resources.first)
            #expect(try api.server.store.find("trains", id: "2")?["company"] == "Saved Offline")
            _ = try api.server.store.delete(trains, id: "2")
        } next: { api, next, _, _ in
            // The next launch sends the save again under its key; the server answers with its replay of
            // the first attempt's answer, the record as saved then.
            let train = try #require(next.instance(of: QueuedTrain.self, id: 2))
            try await next.outbox.flush()
            #expect(next.outbox.pendingCount == 0 && next.outbox.parked.isEmpty)
            #expect(train.isDeleted, "the record the replay describes is gone")
            #expect(next.instance(of: QueuedTrain.self, id: 2) == nil)
            #expect(api.journal.entries.suffix(2) == ["PUT /trains/2", "GET /trains/2"])
        }
    }

    @Test(
        "a create an earlier launch kept, its record read and renamed meanwhile, nothing of it held: the resend's late answer keeps the rename"
    )
    func lostAnswerAcrossLaunchesRenamed() async throws {
        let transport = FaultTransport.underTest()
        try await Self.twoLaunches(through: transport) { _, first in
            // The first launch keeps a create; the server takes it and its answer is lost. The app reads
            // the record and renames it, and quits with both writes kept.
            try await Self.keepCreateAnswerLost(\QueuedTrain.company, in: first, through: transport)
            await first.outbox.pause()
            let read = try #require(try await QueuedTrain.get(in: first).first { $0.company == "Made Offline" })
            read.company = "Renamed"
            try await read.save()
            return try #require(read.id)
        } next: { api, next, record, path in
            // The next launch sends both; the rename is answered first, and once its write is done
            // nothing holds the record's instance. The create's answer, the server's replay of what it
            // made, comes after. The app holds the created instance (a screen showing it), as the
            // outbox made it again.
            _ = try await QueuedTrain.get(policy: .cacheOnly, in: next)
            let created = try #require(next.instances(of: QueuedTrain.self).first { $0.id?.isLocal == true })
            transport.holdAnswers(to: "POST /trains", for: .milliseconds(800))
            try await next.outbox.flush()
            #expect(next.outbox.pendingCount == 0 && next.outbox.parked.isEmpty)
            #expect(try api.server.store.find("trains", id: record.description)?["company"] == "Renamed")
            #expect(created.id == record && next.instance(of: QueuedTrain.self, id: record) === created)
            #expect(created.company == "Renamed", "the create's answer is older than the rename")
            try await next.configuration.storage?.flush()
            // What the record cache kept is the rename too.
            let third = ResourceStore(configuration: api.store.configuration, storage: try SQLiteStorage(path: path))
            let cached = try await QueuedTrain.get(id: record, policy: .cacheOnly, in: third)
            #expect(cached.company == "Renamed")
        }
    }

    @Test(
        "a create an earlier launch kept, its answer lost, its record read and renamed: the resend's late answer never shows the created state"
    )
    func lostAnswerAcrossLaunchesHeldRenamed() async throws {
        let transport = FaultTransport.underTest()
        try await Self.twoLaunches(through: transport, versioned: false) { _, first in
            try await Self.keepCreateAnswerLost(\Train.company, in: first, through: transport)
        } next: { _, next, _, _ in
            // The next launch reads the record, and the app renames the instance it holds. The create's
            // answers are lost until the rename is answered; the resend after it is answered with the
            // server's replay of what it made.
            let read = try #require(try await Train.get(in: next).first { $0.company == "Made Offline" })
            let id = try #require(read.id)
            read.company = "Renamed"
            try await read.save()
            let shown = Locked<[String?]>([])
            let watching = Task {
                for await update in read.updates where update.fields.contains("company") {
                    shown.withLock { $0.append(update.instance.company) }
                }
            }
            defer { watching.cancel() }
            try await Task.sleep(for: .milliseconds(20))
            transport.loseAnswers(to: "POST /trains", count: 1000)
            for _ in 0..<10 where read.hasPendingChanges { try? await next.outbox.flush() }
            #expect(!read.hasPendingChanges && next.outbox.pendingCount == 1)
            transport.loseNothing()
            try await next.outbox.flush()
            try await Task.sleep(for: .milliseconds(50))
            #expect(next.outbox.pendingCount == 0 && next.outbox.parked.isEmpty)
            #expect(next.instance(of: Train.self, id: id) === read)
            #expect(read.company == "Renamed")
            #expect(shown.withLock { $0 }.isEmpty, "the created state, older than the rename, was shown meanwhile")
        }
    }
}
