import Foundation
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
