import Foundation
import GRDB
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer

/// One seeded schedule of what goes wrong at the edges of time, run against the reference server
/// in-process: the app's queued creates, saves and deletes; reads, whole-list reads and a live
/// query's refreshes, some overtaken by a save; answers lost after the server committed; another
/// client creating, editing and deleting, also between two pages of a walk; pushes from the
/// server's change feed; restarts, after a clean quit or from the SQLite file as a kill leaves it;
/// sign-outs; wall-clock steps. The server pages as servers do — with headers, by a default page
/// size, not at all, or capped silently — one way per seed. Then quiescence, and the invariants.
///
/// The schedule is a function of the seed alone: a failure prints its seed and its steps, and
/// `MONORAIL_SIMULATOR_SEED=<seed> swift test --filter SimulatorTests` runs that schedule again.
struct Simulation {
    let seed: UInt64
    /// Steps in the schedule.
    var steps = 40

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// How the server pages its index in this schedule.
    var paging: (name: String, size: Int?, style: IndexPaging) {
        switch seed % 4 {
        case 0: ("headers, unpaged by default", nil, .headers)
        case 1: ("headers, 3 a page by default", 3, .headers)
        case 2: ("bare", nil, .bare)
        default: ("capped silently at 3", nil, .silentCap(3))
        }
    }

    /// Whether the app reads the server's change feed in this schedule.
    var pushes: Bool { seed % 3 != 0 }

    /// The reference server this schedule runs against.
    var server: ReferenceServer.Configuration {
        var configuration = ReferenceServer.Configuration(defaultPageSize: paging.size)
        configuration.indexPaging = paging.style
        return configuration
    }

    /// A write the app was told it kept: its record, for telling a write refused as gone (another
    /// client deleted the record) from one lost.
    private struct Kept {
        var verb: ActionVerb
        var id: ResourceID?
    }

    /// Runs the schedule against `api` (a reference server configured as ``server``), with the
    /// app's SQLite file at `path`; returns the invariants it broke, each followed by the schedule
    /// that led there.
    func run(api: TestAPI, path firstPath: String) async throws -> [String] {
        var random = SplitMix(state: seed)
        let transport = FaultTransport()
        let clockOffset = Locked<TimeInterval>(0)
        var configuration = MonoRail.Configuration.testing(apiRootURL: api.server.baseURL)
        configuration.transport = transport
        configuration.writePolicy = .queued
        configuration.prunesOrphans = true
        configuration.wallClock = { Date().addingTimeInterval(clockOffset.withLock { $0 }) }
        configuration.liveUpdates = pushes ? .serverSentEvents(path: "/changes") : nil
        configuration.models.register(Train.self)
        guard let trains = api.server.store.schema.resource(plural: "trains") else {
            throw Failure(description: "the schema has no trains")
        }
        var path = firstPath
        var store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
        await store.outbox.pause()
        if pushes { try await store.liveUpdates.connect() }
        var held: [Train] = []
        var query = try await Train.query(in: store)
        var log = ["server: \(paging.name); pushes \(pushes ? "on" : "off")"]
        var broken: [String] = []
        var kept: [String: Kept] = [:]
        var counter = 0

        func name() -> String {
            counter += 1
            return "s\(seed)-\(counter)"
        }
        /// Notes what the outbox holds now: every write kept so far is in it until sent.
        func noteKept() {
            for write in store.outbox.pending + store.outbox.parked {
                kept[write.idempotencyKey] = Kept(verb: write.verb, id: write.id)
            }
        }
        func serverIDs() throws -> Set<String> {
            Set(
                try api.server.store.list(trains, filters: [:]).records.compactMap {
                    $0["id"]?.intValue.map(String.init)
                })
        }
        /// Another client's create, edit or delete, straight into the server's records.
        @Sendable func anotherClient(_ choice: Int, _ pick: Int, _ label: String) throws -> String {
            let ids = try api.server.store.list(trains, filters: [:]).records.compactMap { $0["id"]?.intValue }
            switch choice {
            case 0:
                _ = try api.server.store.create(
                    trains, attributes: ["company": .string("other " + label), "in_service": true, "tags": []])
                return "another client creates"
            case 1:
                guard !ids.isEmpty else { return "another client finds nothing to edit" }
                let id = ids[pick % ids.count]
                _ = try api.server.store.update(
                    trains, id: String(id), attributes: ["number_of_cars": .int(Int64(pick))])
                return "another client edits \(id)"
            default:
                guard !ids.isEmpty else { return "another client finds nothing to delete" }
                let id = ids[pick % ids.count]
                _ = try api.server.store.delete(trains, id: String(id))
                return "another client deletes \(id)"
            }
        }
        /// After a read: no record the server holds reads as deleted, unless the app's own delete of
        /// it is kept (a retired duplicate the app still holds is deleted too, and its record has its
        /// one live instance).
        func checkNothingFalselyDeleted(_ step: Int) throws {
            let onServer = try serverIDs()
            let deleting = Set(store.outbox.pending.filter { $0.verb == .destroy }.compactMap { $0.id?.description })
            for train in held where train.isDeleted {
                guard let id = train.id, onServer.contains(id.description), !deleting.contains(id.description)
                else { continue }
                if store.instance(of: Train.self, id: id).map({ $0.isDeleted }) ?? true {
                    broken.append("after step \(step), train \(id) reads as deleted; the server has it")
                }
            }
        }
        func read(_ which: Int, _ step: Int) async {
            do {
                switch which {
                case 0: held = Self.keep(held, try await Train.get(in: store))
                case 1: held = Self.keep(held, try await Train.getAll(in: store))
                default: try await query.refresh()
                }
                log.append("\(step): read \(["get()", "getAll()", "query.refresh()"][which])")
            } catch let error as APIError {
                log.append("\(step): read \(which) failed: \(error.code)")
            } catch {
                log.append("\(step): read \(which) failed: \(error)")
            }
        }

        for step in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<12:
                let train = Train()
                train.company = name()
                try await train.create(in: store)
                held.append(train)
                log.append("\(step): create \(train.company ?? "")")
            case 12..<26:
                guard let train = held.filter({ !$0.isDeleted }).randomElement(using: &random)
                else { continue }
                train.company = name()
                train.maxSpeed = Double(Int.random(in: 1...300, using: &random))
                try await train.save()
                log.append("\(step): save \(train.id?.description ?? "?") as \(train.company ?? "")")
            case 26..<31:
                guard let index = held.indices.filter({ !held[$0].isDeleted }).randomElement(using: &random) else {
                    continue
                }
                let train = held.remove(at: index)
                try await train.delete()
                log.append("\(step): delete \(train.id?.description ?? "?")")
            case 31..<39:
                let choice = Int.random(in: 0..<3, using: &random)
                let pick = Int.random(in: 0..<1000, using: &random)
                log.append("\(step): " + (try anotherClient(choice, pick, name())))
            case 39..<47:
                await read(Int.random(in: 0..<3, using: &random), step)
                try checkNothingFalselyDeleted(step)
            case 47..<52:
                // Another client's change lands between the first page of a walk and the next.
                let choice = Int.random(in: 0..<3, using: &random)
                let pick = Int.random(in: 0..<1000, using: &random)
                let label = name()
                let done = Locked<String?>(nil)
                transport.beforeSending(
                    where: { $0.hasPrefix("GET /trains?") && $0.contains("page=2") },
                    run: {
                        let what = try anotherClient(choice, pick, label)
                        done.withLock { $0 = what }
                    })
                await read(Int.random(in: 1..<3, using: &random), step)
                log.append("\(step): between pages, " + (done.withLock { $0 } ?? "nothing (one page)"))
                transport.loseNothing()
                try checkNothingFalselyDeleted(step)
            case 52..<57:
                // A read answered before a save, its answer arriving after the save's.
                guard
                    let train = held.filter({ !$0.isDeleted && $0.id.map { !$0.isLocal } == true })
                        .randomElement(using: &random), let id = train.id
                else { continue }
                let line = Bool.random(using: &random) ? "GET /trains" : "GET /trains/\(id)"
                transport.holdAnswers(to: line, for: .milliseconds(Int.random(in: 20...60, using: &random)))
                let reader = store
                let reading = Task { () -> [Train] in
                    line == "GET /trains" ? try await Train.get(in: reader) : [try await Train.get(id: id, in: reader)]
                }
                try await Task.sleep(for: .milliseconds(5))
                let company = name()
                train.company = company
                try await train.save()
                noteKept()
                let flushed = (try? await store.outbox.flush()) != nil
                let listed = try? await reading.value
                transport.release(line)
                held = Self.keep(held, listed ?? [])
                log.append("\(step): \(line) overtaken by saving \(id) as \(company)")
                let onServer = try api.server.store.find(trains, id: id.description)?["company"]?.stringValue
                if flushed, store.outbox.pendingCount == 0, onServer == company, !train.isDeleted,
                    train.company != company
                {
                    broken.append("after step \(step), the held read's answer put back \(train.company ?? "nil")")
                }
            case 57..<65:
                let method = ["PUT", "POST", "DELETE"].randomElement(using: &random) ?? "PUT"
                let path: String
                if method == "POST" {
                    path = "/trains"
                } else if let id = held.compactMap(\.id).filter({ !$0.isLocal }).randomElement(using: &random) {
                    path = "/trains/\(id)"
                } else {
                    continue
                }
                transport.loseAnswers(to: "\(method) \(path)")
                log.append("\(step): the next answer to \(method) \(path) is lost")
            case 65..<78:
                noteKept()
                do {
                    try await store.outbox.flush()
                    log.append("\(step): flush")
                } catch let error as APIError {
                    log.append("\(step): flush stopped: \(error.code)")
                }
            case 78..<87:
                // A restart. After a clean quit the file has every commit; after a kill, only what
                // was committed by then: a copy of the file taken now is what the next launch finds.
                noteKept()
                let kill = Bool.random(using: &random)
                await store.outbox.pause()
                store.liveUpdates.disconnect()
                if kill {
                    let next = path + "-\(step)"
                    let source = try DatabaseQueue(path: path)
                    let copy = try DatabaseQueue(path: next)
                    try source.backup(to: copy)
                    try source.close()
                    try copy.close()
                    path = next
                } else {
                    try await store.configuration.storage?.flush()
                }
                held = []
                store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
                await store.outbox.pause()
                try await store.outbox.load()
                if pushes { try await store.liveUpdates.connect() }
                query = try await Train.query(in: store)
                log.append("\(step): restart after \(kill ? "a kill" : "a clean quit")")
            case 87..<91:
                // Sign-out: what is still kept is discarded, not lost.
                noteKept()
                let sent = Set(try api.server.store.idempotencyLedger().map(\.key))
                for key in kept.keys where !sent.contains(key) { kept[key] = nil }
                try await store.clear()
                held = []
                if pushes { try await store.liveUpdates.connect() }
                query = try await Train.query(in: store)
                log.append("\(step): sign-out (clear)")
            default:
                let jump = Double(Int.random(in: -86_400...86_400, using: &random))
                clockOffset.withLock { $0 += jump }
                log.append("\(step): the wall clock steps \(Int(jump)) s")
            }
            noteKept()
        }

        // Quiescence: no more faults, every kept write sent, every change pushed, one whole read.
        transport.loseNothing()
        // Flushed at least once: after a restart the kept writes are counted once flush() read them.
        for _ in 0..<20 {
            try? await store.outbox.flush()
            if store.outbox.isLoaded, store.outbox.pendingCount == 0 { break }
        }
        if pushes {
            let newest = try api.server.store.changeBounds().newest
            let caughtUp = try await eventually(within: .seconds(5)) {
                (store.liveUpdates.lastEventID.flatMap { Int64($0) } ?? 0) >= newest
            }
            if !caughtUp {
                broken.append("the stream stopped at \(store.liveUpdates.lastEventID ?? "nil") of \(newest)")
            }
            // Before any read of ours: what the app holds is what the server holds.
            let onServer = try api.server.store.list(trains, filters: [:]).records
            for record in onServer {
                guard let id = record["id"]?.intValue.map(String.init),
                    let train = store.instances(of: Train.self).first(where: {
                        $0.id?.description == id && !$0.isDeleted
                    })
                else { continue }
                if train.company != record["company"]?.stringValue {
                    broken.append(
                        "pushed to quiescence, train \(id) holds \(train.company ?? "nil"), the server \(record["company"]?.stringValue ?? "nil")"
                    )
                }
            }
            // And nothing the server deleted, each deletion pushed, stands as a record.
            let serverIDs = Set(onServer.compactMap { $0["id"]?.intValue.map(String.init) })
            for train in store.instances(of: Train.self) where !train.isDeleted {
                guard let id = train.id, !id.isLocal, !serverIDs.contains(id.description) else { continue }
                broken.append(
                    "pushed to quiescence, train \(id) holds \(train.company ?? "nil"), the server deleted it")
            }
            store.liveUpdates.disconnect()
        }
        let final = try await Train.getAll(in: store)
        try await store.configuration.storage?.flush()
        broken += try await check(api: api, store: store, final: final, held: held, kept: kept, path: path)
        return broken.isEmpty ? [] : broken + ["seed \(seed), schedule:"] + log.map { "  " + $0 }
    }

    /// The invariants after quiescence.
    private func check(
        api: TestAPI, store: ResourceStore, final: [Train], held: [Train], kept: [String: Kept], path: String
    ) async throws -> [String] {
        var broken: [String] = []
        guard let trains = api.server.store.schema.resource(plural: "trains") else { return ["no trains"] }
        let onServer = try api.server.store.list(trains, filters: [:]).records
        let serverIDs = Set(onServer.compactMap { $0["id"]?.intValue.map(String.init) })
        if store.outbox.pendingCount != 0 { broken.append("\(store.outbox.pendingCount) writes still pending") }
        if !store.outbox.parked.isEmpty {
            broken.append("parked: \(store.outbox.parked.map { $0.parking?.message ?? "" })")
        }
        // Every write the app was told was kept reached the server once, or its record is gone.
        let ledger = Dictionary(grouping: try api.server.store.idempotencyLedger(), by: \.key)
        for (key, entries) in ledger where entries.count > 1 {
            broken.append("key \(key) applied \(entries.count) times")
        }
        for (key, write) in kept where ledger[key] == nil {
            let isGone = write.verb != .create && !serverIDs.contains(write.id?.description ?? "")
            if !isGone {
                broken.append(
                    "kept \(write.verb.rawValue) \(key) of \(write.id?.description ?? "?") never reached the server")
            }
        }
        // At most one live instance per record; none of the server's records read as deleted.
        let liveIDs = store.instances(of: Train.self).filter { !$0.isDeleted }.compactMap { $0.id?.description }
        if Set(liveIDs).count != liveIDs.count {
            broken.append("two live instances for one record: \(liveIDs.sorted())")
        }
        let finalIDs = Set(final.compactMap { $0.id?.description })
        if finalIDs != serverIDs {
            broken.append("the final read holds \(finalIDs.sorted()), the server \(serverIDs.sorted())")
        }
        // Each instance the app holds is its record's one instance, with the server's id.
        for train in held where !train.isDeleted {
            guard let id = train.id, !id.isLocal else {
                broken.append("an instance the app holds has no server id: \(train.id?.description ?? "nil")")
                continue
            }
            let own = store.instance(of: Train.self, id: id)
            if own !== train {
                broken.append(
                    "the app's instance of train \(id) (\(Self.describe(train))) is not the store's (\(own.map(Self.describe) ?? "none"))"
                )
            }
        }
        for train in final where train.isDeleted {
            broken.append("train \(train.id?.description ?? "?") reads as deleted")
        }
        for record in onServer {
            guard let id = record["id"]?.intValue.map(String.init) else { continue }
            let company = final.first { $0.id?.description == id }?.company
            if company != record["company"]?.stringValue {
                broken.append(
                    "train \(id) is \(company ?? "nil") here, \(record["company"]?.stringValue ?? "nil") on the server")
            }
        }
        // Storage holds what the server holds, and nothing the server no longer has.
        let database = try DatabaseQueue(path: path)
        let stored = try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, body FROM record WHERE model = 'train'").map {
                row -> (String, Data) in
                (row["id"], row["body"])
            }
        }
        try database.close()
        var storedCompanies: [String: String?] = [:]
        for (id, body) in stored {
            let json = try? MessagePackReader().readJSON(body)
            storedCompanies[id] = json?["company"]?.stringValue
        }
        for record in onServer {
            guard let id = record["id"]?.intValue.map(String.init) else { continue }
            if storedCompanies[id] != .some(record["company"]?.stringValue) {
                broken.append(
                    "train \(id) is stored as \(String(describing: storedCompanies[id])), \(record["company"]?.stringValue ?? "nil") on the server"
                )
            }
        }
        for id in storedCompanies.keys where !serverIDs.contains(id) {
            broken.append("train \(id) is stored, the server no longer has it")
        }
        return broken
    }

    /// An instance's state, for a failure's message.
    private static func describe(_ train: Train) -> String {
        "\(train.company ?? "nil"), \(train.hasPendingChanges ? "pending" : "settled")"
            + "\(train.hasChanges ? ", unsaved changes" : "")\(train.rejection.map { ", rejected: \($0.message)" } ?? "")"
    }

    /// The trains held, with those a list brought in.
    private static func keep(_ held: [Train], _ listed: [Train]) -> [Train] {
        held + listed.filter { train in !held.contains { $0 === train } }
    }
}
