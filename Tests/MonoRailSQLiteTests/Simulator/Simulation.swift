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
/// query's refreshes; answers lost after the server committed; another client creating, editing and
/// deleting; restarts from the SQLite file as a kill leaves it; sign-outs; wall-clock steps. Then
/// quiescence, and the invariants.
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

    /// A write the app was told it kept: its record, for telling a write refused as gone (another
    /// client deleted the record) from one lost.
    private struct Kept {
        var verb: ActionVerb
        var id: ResourceID?
    }

    /// Runs the schedule against `api` (a fresh reference server), with the app's SQLite file at
    /// `path`; returns the invariants it broke, each followed by the schedule that led there.
    func run(api: TestAPI, path: String) async throws -> [String] {
        var random = SplitMix(state: seed)
        let transport = FaultTransport()
        let clockOffset = Locked<TimeInterval>(0)
        var configuration = MonoRail.Configuration.testing(apiRootURL: api.server.baseURL)
        configuration.transport = transport
        configuration.writePolicy = .queued
        configuration.prunesOrphans = true
        configuration.wallClock = { Date().addingTimeInterval(clockOffset.withLock { $0 }) }
        configuration.models.register(Train.self)
        guard let trains = api.server.store.schema.resource(plural: "trains") else {
            throw Failure(description: "the schema has no trains")
        }
        var store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
        await store.outbox.pause()
        var held: [Train] = []
        var query = try await Train.query(in: store)
        var log: [String] = []
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

        for step in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<14:
                let train = Train()
                train.company = name()
                try await train.create(in: store)
                held.append(train)
                log.append("\(step): create \(train.company ?? "")")
            case 14..<30:
                guard let train = held.filter({ !$0.isDeleted }).randomElement(using: &random)
                else { continue }
                train.company = name()
                train.maxSpeed = Double(Int.random(in: 1...300, using: &random))
                try await train.save()
                log.append("\(step): save \(train.id?.description ?? "?") as \(train.company ?? "")")
            case 30..<36:
                guard let index = held.indices.filter({ !held[$0].isDeleted }).randomElement(using: &random) else {
                    continue
                }
                let train = held.remove(at: index)
                try await train.delete()
                log.append("\(step): delete \(train.id?.description ?? "?")")
            case 36..<46:
                // Another client, straight into the server's records.
                let ids = try api.server.store.list(trains, filters: [:]).records.compactMap { $0["id"]?.intValue }
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    _ = try api.server.store.create(
                        trains, attributes: ["company": .string("other " + name()), "in_service": true, "tags": []])
                    log.append("\(step): another client creates")
                case 1:
                    guard let id = ids.randomElement(using: &random) else { continue }
                    _ = try api.server.store.update(
                        trains, id: String(id), attributes: ["number_of_cars": .int(Int64(step))])
                    log.append("\(step): another client edits \(id)")
                default:
                    guard let id = ids.randomElement(using: &random) else { continue }
                    _ = try api.server.store.delete(trains, id: String(id))
                    log.append("\(step): another client deletes \(id)")
                }
            case 46..<56:
                let which = Int.random(in: 0..<3, using: &random)
                do {
                    switch which {
                    case 0: held = Self.keep(held, try await Train.get(in: store))
                    case 1: held = Self.keep(held, try await Train.getAll(in: store))
                    default: try await query.refresh()
                    }
                    log.append("\(step): read \(["get()", "getAll()", "query.refresh()"][which])")
                } catch let error as APIError {
                    log.append("\(step): read \(which) failed: \(error.code)")
                }
            case 56..<66:
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
            case 66..<80:
                noteKept()
                do {
                    try await store.outbox.flush()
                    log.append("\(step): flush")
                } catch let error as APIError {
                    log.append("\(step): flush stopped: \(error.code)")
                }
            case 80..<88:
                // A restart: the process ends where it stands; a new one opens the file.
                noteKept()
                await store.outbox.pause()
                held = []
                store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
                await store.outbox.pause()
                try await store.outbox.load()
                query = try await Train.query(in: store)
                log.append("\(step): restart")
            case 88..<92:
                // Sign-out: what is still kept is discarded, not lost.
                noteKept()
                let sent = Set(try api.server.store.idempotencyLedger().map(\.key))
                for key in kept.keys where !sent.contains(key) { kept[key] = nil }
                try await store.clear()
                held = []
                query = try await Train.query(in: store)
                log.append("\(step): sign-out (clear)")
            default:
                let jump = Double(Int.random(in: -86_400...86_400, using: &random))
                clockOffset.withLock { $0 += jump }
                log.append("\(step): the wall clock steps \(Int(jump)) s")
            }
            noteKept()
        }

        // Quiescence: no more faults, every kept write sent, one whole read of the list.
        transport.loseNothing()
        for _ in 0..<20 where store.outbox.pendingCount > 0 {
            try? await store.outbox.flush()
        }
        let final = try await Train.getAll(in: store)
        try await store.configuration.storage?.flush()
        let broken = try await check(api: api, store: store, final: final, held: held, kept: kept, path: path)
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
            if store.instance(of: Train.self, id: id) !== train {
                broken.append("the app's instance of train \(id) is not the store's")
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

    /// The trains held, with those a list brought in.
    private static func keep(_ held: [Train], _ listed: [Train]) -> [Train] {
        held + listed.filter { train in !held.contains { $0 === train } }
    }
}
