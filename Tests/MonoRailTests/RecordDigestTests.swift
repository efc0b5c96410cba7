import Foundation
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

    @Test("an instance removed from the identity map between reading and merging is not merged into")
    func removedMeanwhile() throws {
        let store = Self.store()
        let body = Self.list([Self.record(1, 0)])
        let first = try #require(try Train.merge(listBody: body, in: store).first)
        let pipeline = ActionPipeline<Train>(store: store)
        let coder = FieldCoder(options: pipeline.setup.coding)
        let decoder = pipeline.setup.decoder(coder: coder, store: store)
        let response = Train.receivedResponse(body, contentType: "application/json", setup: pipeline.setup)
        let patches = try #require(pipeline.setup.textRecords(in: response, decoder: decoder)).main
        #expect(patches.first?.known === first)
        // Removed after the read found it, before the merge: the merge looks again and makes a new one.
        store.identityMap.withLock {
            $0.remove(IdentityMap.Key(type: ObjectIdentifier(Train.self), id: .int(1)), ifHolding: first)
        }
        let merged = try store.mergeKeepingSideloads(
            patches, sideloaded: [], target: nil, mode: .read, coder: coder, fetchedAt: Date())
        #expect(merged.instances.first !== first && merged.instances.first?.company == "DB 1")
        #expect(store.instance(of: Train.self, id: 1) === merged.instances.first)
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
    func differential() throws {
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
