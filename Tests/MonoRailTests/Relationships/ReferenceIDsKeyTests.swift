import Foundation
import MonoRailTesting
import TestModels
import Testing

@testable import MonoRail

@Suite("The key a @References(.many) field's ids travel under")
struct ReferenceIDsKeyTests {
    static func store(_ key: ServerConventions.ReferenceIDsKey?, conventions: ServerConventions = .rails)
        -> ResourceStore
    {
        var conventions = conventions
        if let key { conventions.referenceIDsKey = key }
        return ResourceStore(
            configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9"), conventions: conventions))
    }

    /// The body `save()` would send, worked out by the pipeline without sending it.
    static func sentBody(of yard: Yard, in store: ResourceStore) throws -> JSONValue? {
        try ActionPipeline<Yard>(store: store).prepare(ModelAction(operation: .save(yard), store: store)).body
    }

    @Test("Rails' train_ids by default: read and sent")
    func rails() throws {
        let store = Self.store(nil)
        let yard = try Yard.merge(recordBody: Data(#"{"yard": {"id": 1, "train_ids": [2, 1]}}"#.utf8), in: store)
        // What was read is what is sent.
        #expect(try Self.sentBody(of: yard, in: store)?["train_ids"] == [2, 1])
        #expect(try Self.sentBody(of: yard, in: store)?["trains"] == nil)
        // The seed's key means nothing here.
        let other = try Yard.merge(recordBody: Data(#"{"yard": {"id": 2, "trains": [2, 1]}}"#.utf8), in: store)
        #expect(try Self.sentBody(of: other, in: store)?["train_ids"] == [])
    }

    @Test("the MonoRail seed's related_models: the field's name, read and sent")
    func seed() throws {
        let store = Self.store(.name)
        let yard = try Yard.merge(recordBody: Data(#"{"yard": {"id": 1, "trains": [2, 1]}}"#.utf8), in: store)
        #expect(try Self.sentBody(of: yard, in: store)?["trains"] == [2, 1])
        #expect(try Self.sentBody(of: yard, in: store)?["train_ids"] == nil)
    }

    @Test("the Objects preset sends dependencies as \"<plural>\": [ids]")
    func objects() throws {
        let store = Self.store(nil, conventions: .objects)
        let yard = try Yard.merge(recordBody: Data(#"{"object": {"id": 1, "trains": [3]}}"#.utf8), in: store)
        #expect(try Self.sentBody(of: yard, in: store)?["trains"] == [3])
    }
}

@Suite("Membership changes of a @References(.many) without JSON:API: a save of the owner", .timeLimit(.minutes(5)))
struct MembershipSaveTests {
    @Test("add, remove and replace save the owner with the ids changed")
    func saves() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /yards/1", body: #"{"yard": {"id": 1, "name": "Old", "train_ids": [2]}}"#)
            let yard = try await Yard.get(id: 1, in: store)
            let first = try Seed.Train.merge(recordBody: Data(#"{"train": {"id": 1}}"#.utf8), in: store)
            server.respond(to: "PUT /yards/1", body: #"{"yard": {"id": 1, "name": "Old", "train_ids": [2, 1]}}"#)
            try await yard.$trains.add([first])
            let put = try #require(server.requests.last { $0.hasPrefix("PUT /yards/1") })
            #expect(try recordedBody(put)["yard"]?["train_ids"] == [2, 1])
            #expect(yard.$trains.ids == [2, 1])
            #expect(!yard.hasChanges)

            let unsaved = Seed.Train()
            let error = try await #require(throws: APIError.self) { try await yard.$trains.remove([unsaved]) }
            #expect(error.code == .notPersisted)
        }
    }
}
