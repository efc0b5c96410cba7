import Foundation
import TestModels
import TestServer
import Testing

@testable import MonoRail

/// A JSON record whose bytes are the ones its instance was last merged from is not decoded again:
/// its instance's server values stand for it (``RecordDigest``). These tests show the shortcut is
/// taken, and that taking it never changes what a merge does: a random run of merges, edits and
/// reverts ends the same for ``Train`` (in place, digests) as for ``TreeTrain`` (always the tree).
@Suite("Records re-read unchanged are not decoded again")
struct RecordDigestTests {
    static func store() -> ResourceStore {
        ResourceStore(configuration: MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9")))
    }

    static func record(_ id: Int, _ variant: Int) -> String {
        switch variant {
        case 0:
            #"{"id": \#(id), "company": "DB \#(id)", "number_of_cars": \#(id), "max_speed": 1.5, "in_service": true, "built_at": "2004-07-19T11:20:00Z", "tags": ["a"]}"#
        case 1:
            #"{"id": \#(id), "company": "SNCF", "number_of_cars": 8, "max_speed": 320, "in_service": false, "built_at": null, "tags": []}"#
        case 2:
            // The same values as variant 0, other bytes.
            #"{"id": \#(id),  "company": "DB \#(id)", "number_of_cars": \#(id), "max_speed": 1.50, "in_service": true, "built_at": "2004-07-19T11:20:00Z", "tags": ["a"]}"#
        case 3:
            // Incomplete: no digest is kept for it.
            #"{"id": \#(id), "company": "ÖBB", "tags": ["night"]}"#
        default:
            // The id not first: read in full.
            #"{"company": "DB \#(id)", "id": \#(id), "number_of_cars": \#(id), "max_speed": 1.5, "in_service": true, "built_at": "2004-07-19T11:20:00Z", "tags": ["a"]}"#
        }
    }

    static func list(_ records: [String]) -> Data {
        Data(("{\"trains\": [" + records.joined(separator: ", ") + "]}").utf8)
    }

    /// Record 1 merged into a store, and its list read again in place, step by step, as a merge
    /// reads it: to come between the reading and the merging.
    struct Reread {
        let store = RecordDigestTests.store()
        let body = RecordDigestTests.list([RecordDigestTests.record(1, 0)])
        let first: Train
        let pipeline: ActionPipeline<Train>
        let coder: FieldCoder

        init() throws {
            first = try #require(try Train.merge(listBody: body, in: store).first)
            pipeline = ActionPipeline<Train>(store: store)
            coder = FieldCoder(options: pipeline.setup.coding)
        }

        func read(probing: Bool = true) throws -> [RecordPatch<Train>] {
            let response = Train.receivedResponse(body, contentType: "application/json", setup: pipeline.setup)
            let decoder = pipeline.setup.decoder(coder: coder, store: store, probing: probing)
            return try #require(pipeline.setup.inPlaceRecords(in: response, decoder: decoder)).main
        }

        func merge(_ patches: [RecordPatch<Train>], mode: InstanceState<Train>.MergeMode = .read) throws -> [Train] {
            try store.mergeKeepingSideloads(
                patches, sideloaded: [], target: nil, mode: mode, coder: coder, fetched: store.stamp()
            ).instances
        }
    }

    @Test("a record re-read unchanged is not decoded: its instance's server values stand for it")
    func shortcut() throws {
        let store = Self.store()
        let body = Self.list([Self.record(1, 0), Self.record(2, 1)])
        let first = try Train.merge(listBody: body, in: store)
        // Server and local values made to differ from the bytes, the digest kept: a merge that
        // decoded the record would bring "DB 1" back; one that trusts the digest leaves them.
        first[0]._$state.state.withLock { state in
            let digest = state.serverDigest
            state.server.company = "kept"
            state.values.company = "kept"
            state.serverDigest = digest
        }
        #expect(first[0]._$state.state.withLock { $0.serverDigest } != nil)
        let again = try Train.merge(listBody: body, in: store)
        #expect(again[0] === first[0] && again[0].company == "kept")
        #expect(again[1].company == "SNCF")
        // Other bytes with the same values are decoded, and so bring the record back.
        _ = try Train.merge(listBody: Self.list([Self.record(1, 2)]), in: store)
        #expect(first[0].company == "DB 1")
    }

    @Test(
        "a record found unchanged whose instance is gone or changed by the time of the merge merges nothing; read again, it merges in full",
        arguments: ["removed", "merged", "replaced"])
    func expired(change: String) throws {
        let reread = try Reread()
        let (store, first) = (reread.store, reread.first)
        let patches = try reread.read()
        #expect(patches.first?.isUnchanged == true && patches.first?.known === first)
        #expect(patches.first?.values.company == nil, "a record found unchanged is not decoded")
        let key = IdentityMap.Key(type: ObjectIdentifier(Train.self), id: .int(1))
        var replacement: Train?
        switch change {
        case "removed":
            store.identityMap.withLock { $0.remove(key, ifHolding: first) }
        case "merged":
            _ = try Train.merge(json: ["id": 1, "company": "tree", "tags": []], in: store)
        default:
            // Another instance under the id: the identity map looked up again finds it.
            let other = Train()
            store.identityMap.withLock {
                $0.remove(key, ifHolding: first)
                $0.insert(other, for: key, id: .int(1))
            }
            replacement = other
        }
        #expect(throws: Merger.ProbeExpired.self) { try reread.merge(patches) }
        // Nothing merged.
        #expect(first.company == (change == "merged" ? "tree" : "DB 1"))
        #expect(store.instance(of: Train.self, id: 1) === (change == "merged" ? first : replacement))
        // Read again without looking for unchanged records, as the pipeline does, it merges in full.
        let again = try reread.read(probing: false)
        #expect(again.first?.isUnchanged == false)
        let merged = try #require(try reread.merge(again).first)
        #expect(merged.company == "DB 1" && merged.numberOfCars == 1)
        #expect(store.instance(of: Train.self, id: 1) === merged)
        #expect((merged === first) == (change == "merged"))
        if let replacement { #expect(merged === replacement) }
    }

    @Test("a record found unchanged is no answer to a write: it must be decoded")
    func notForWrites() throws {
        let reread = try Reread()
        let patches = try reread.read()
        #expect(patches.first?.isUnchanged == true)
        #expect(throws: Merger.ProbeExpired.self) { try reread.merge(patches, mode: .saved(sent: [])) }
        #expect(reread.first.company == "DB 1")
    }

    @Test("server values changed locally after the merge checked a record found unchanged stand")
    func changedAfterCheck() throws {
        let reread = try Reread()
        let first = reread.first
        let patch = try #require(try reread.read().first)
        #expect(patch.isUnchanged)
        // What a local change to the server values (a save answered without a body, say) does, had
        // it come between the check and the change: the digest is forgotten.
        first._$state.state.withLock { $0.server.company = "saved" }
        let changed = first._$state.apply(
            patch, mode: .read, store: reread.store, coder: reread.coder, fields: Train.resourceSchema.fields,
            fetched: reread.store.stamp())
        #expect(changed.isEmpty)
        #expect(first._$state.state.withLock { $0.server.company } == "saved" && first.numberOfCars == 1)
    }

    @Test("two lists of the same records merged at once, over and over, each merge whole: no empty values, no error")
    func racing() throws {
        let store = Self.store()
        let lists = [0, 1].map { variant in Self.list((1...40).map { Self.record($0, variant) }) }
        let expected = ["DB 1", "SNCF"]
        // Held, so that the records have instances to be found unchanged for.
        let held = try Train.merge(listBody: lists[0], in: store)
        let failures = Locked<[String]>([])
        // Each side re-reads its own bytes: found unchanged when the other side did not merge
        // since, and expired when it did between this side's reading and its merge.
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            for round in 0..<300 {
                do {
                    let merged = try Train.merge(listBody: lists[side], in: store)
                    let first = merged.first?.company
                    if merged.count != 40 || !expected.contains(first ?? "") {
                        failures.withLock {
                            $0.append("side \(side) round \(round): \(merged.count), \(first ?? "nil")")
                        }
                    }
                } catch {
                    failures.withLock { $0.append("side \(side) round \(round): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(store.instance(of: Train.self, id: 1) === held[0])
        #expect(expected.contains(held[0].company ?? ""))
    }

    @Test("a read and merge runs again, without looking for unchanged records, only when one expired")
    func readingAgain() throws {
        var calls: [Bool] = []
        let result = try ActionPipeline<Train>.readingAgainIfExpired { probing -> Int in
            calls.append(probing)
            if probing { throw Merger.ProbeExpired() }
            return 7
        }
        #expect(result == 7 && calls == [true, false])
        calls = []
        #expect(throws: APIError.self) {
            try ActionPipeline<Train>.readingAgainIfExpired { probing -> Int in
                calls.append(probing)
                throw APIError(.inconsistentResponse, "other")
            }
        }
        #expect(calls == [true])
    }

    @Test("any other change to an instance's server values forgets the digest")
    func forgets() throws {
        let store = Self.store()
        let body = Self.list([Self.record(1, 0)])
        let train = try #require(try Train.merge(listBody: body, in: store).first)
        #expect(train._$state.state.withLock { $0.serverDigest } != nil)
        // Merged through the tree (a JSON value, not bytes): no digest, so the bytes are read again.
        _ = try Train.merge(
            json: ["id": 1, "company": "tree", "number_of_cars": 1, "max_speed": 1.5, "in_service": true, "tags": []],
            in: store)
        #expect(train._$state.state.withLock { $0.serverDigest } == nil)
        _ = try Train.merge(listBody: body, in: store)
        #expect(train.company == "DB 1")
        // An incomplete record leaves none either.
        _ = try Train.merge(listBody: Self.list([Self.record(1, 3)]), in: store)
        #expect(train._$state.state.withLock { $0.serverDigest } == nil && train.company == "ÖBB")
    }

    @Test("random merges, edits and reverts end as they do through the tree")
    func differential() async throws {
        try await onOwnThread {
            var generator = SplitMix(state: 0xD16E_57)
            for run in 0..<40 {
                let inPlace = Self.store()
                let tree = Self.store()
                var held: [Int: (Train, TreeTrain)] = [:]
                for step in 0..<30 {
                    switch Int.random(in: 0..<10, using: &generator) {
                    case 0..<6:
                        let ids = (1...6).filter { _ in Bool.random(using: &generator) }
                        let body = Self.list(ids.map { Self.record($0, Int.random(in: 0..<5, using: &generator)) })
                        let read = try Train.merge(listBody: body, in: inPlace)
                        let built = try TreeTrain.merge(listBody: body, in: tree)
                        for (a, b) in zip(read, built) {
                            if case .int(let id)? = a.id { held[Int(id)] = (a, b) }
                        }
                    case 6..<8:
                        guard let (a, b) = held.values.randomElement(using: &generator) else { continue }
                        let company = "edit \(step)"
                        a.company = company
                        b.company = company
                    case 8:
                        guard let (a, b) = held.values.randomElement(using: &generator) else { continue }
                        a.revert()
                        b.revert()
                    default:
                        guard let (a, b) = held.values.randomElement(using: &generator) else { continue }
                        a.tags.append("x")
                        b.tags.append("x")
                    }
                    for (id, (a, b)) in held {
                        #expect(Self.state(a) == Self.state(b), "run \(run) step \(step) id \(id)")
                    }
                }
            }
        }
    }

    /// What a merge may change: the values, the server values and which fields are edited.
    static func state<Model: ResourceModel>(_ instance: Model) -> [String] {
        let coder = FieldCoder(options: CodingOptions())
        let fields = Model.resourceSchema.fields
        return instance._$state.state.withLock { state in
            fields.map { String(describing: try? $0.encode(state.values, coder)) }
                + fields.map { String(describing: try? $0.encode(state.server, coder)) }
                + [state.edits.map { $0 == 0 ? "-" : "e" }.joined()]
        }
    }
}
