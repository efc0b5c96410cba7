import Foundation
import TestModels
import TestServer
import Testing

@testable import MonoRail

/// JSON lists are decoded where their records lie instead of through a tree. ``Train`` reads in
/// place; ``TreeTrain``, the same fields with a record hook, always through the tree: merged from the
/// same bytes they must give the same values or the same error.
@Suite("JSON lists read in place merge exactly as through the tree")
struct TextListTests {
    static let document = #"""
        {"trains": [
         {"id": 1, "company": "Deutsche Bahn AG", "number_of_cars": 12, "max_speed": 230.5, "in_service": true,
          "built_at": "2004-07-19T11:20:00Z", "tags": ["intercity", "electric"], "notes": "x\n\"y\""},
         {"id": 2, "company": "SNCF", "number_of_cars": 8, "max_speed": 320, "in_service": false,
          "built_at": null, "tags": [], "depot": {"name": "Paris", "capacity": 40}},
         {"id": 3, "company": "\u00d6BB \ud83d\ude82", "number_of_cars": 4, "max_speed": 160.25e0, "tags": ["night"]},
         {"id": "4", "company": "", "number_of_cars": 65535, "max_speed": -1.5E-1, "in_service": true},
         {"id": 5, "company": "SBB CFF FFS", "built_at": 1577836800.5, "tags": ["a", "b", "c"]},
         {"max_speed": 99.9, "number_of_cars": 3e2, "id": 6}
        ], "meta": {"count": 6, "next": null}}
        """#

    static func store() -> ResourceStore {
        ResourceStore(configuration: MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9")))
    }

    @Test("a list is read in place, and its records hold what the tree gives")
    func inPlace() throws {
        let store = Self.store()
        let pipeline = ActionPipeline<Train>(store: store)
        let body = Data(Self.document.utf8)
        let response = Train.receivedResponse(body, contentType: "application/json", setup: pipeline.setup)
        let decoder = pipeline.setup.decoder(coder: FieldCoder(options: pipeline.setup.coding), store: store)
        let located = try #require(pipeline.setup.inPlaceRecords(in: response, decoder: decoder))
        #expect(located.main.count == 6 && located.path == "$.trains")
        #expect(located.container?["meta"] == ["count": 6, "next": nil])
        let read = try Train.merge(listBody: body, in: Self.store())
        let built = try TreeTrain.merge(listBody: body, in: Self.store())
        #expect(read.map(Self.summary) == built.map(Self.summary))
        #expect(read[2].company == "ÖBB 🚂" && read[5].numberOfCars == 300 && read[3].maxSpeed == -0.15)
    }

    @Test("what is not a plain list is left to the tree: other shapes, and bodies in neither format")
    func leftToTheTree() throws {
        let store = Self.store()
        let pipeline = ActionPipeline<Train>(store: store)
        let decoder = pipeline.setup.decoder(coder: FieldCoder(options: pipeline.setup.coding), store: store)
        for text in [#"{}"#, #"{"trains": {"id": 1}}"#, #"{"trains": [], "trains": []}"#, #"[{"id": 1}] x"#, "\"a\""] {
            let response = Train.receivedResponse(
                Data(text.utf8), contentType: "application/json", setup: pipeline.setup)
            #expect(pipeline.setup.inPlaceRecords(in: response, decoder: decoder) == nil, "\(text)")
        }
        let bare = Train.receivedResponse(
            Data(#" [ {"id": 1} ] "#.utf8), contentType: "application/json", setup: pipeline.setup)
        #expect(pipeline.setup.inPlaceRecords(in: bare, decoder: decoder)?.main.count == 1)
        // The same reader takes MessagePack; a body in neither format is left to the tree.
        let packed = Train.receivedResponse(Data([0x90]), contentType: "application/x-msgpack", setup: pipeline.setup)
        #expect(pipeline.setup.inPlaceRecords(in: packed, decoder: decoder)?.main.count == 0)
        let page = Train.receivedResponse(Data("[]".utf8), contentType: "text/html", setup: pipeline.setup)
        #expect(pipeline.setup.inPlaceRecords(in: page, decoder: decoder) == nil)
    }

    static func summary(_ train: some ResourceModel) -> [String] {
        let values = train._$state.snapshot().values
        let coder = FieldCoder(options: CodingOptions())
        return [String(describing: train.id)]
            + type(of: train).resourceSchema.fields.map { String(describing: try? $0.encode(values, coder)) }
    }

    @Test("damaged JSON lists give what the tree gives: the same values or the same error")
    func differential() async {
        await onOwnThread {
            let outcomes = Self.compareDamaged(Array(Self.document.utf8), iterations: 3_000, seed: 0x5465_7874) {
                try Self.mergeList($0, $1)
            }
            // Both kinds of outcome were exercised, not only failures.
            #expect(outcomes.same > 300 && outcomes.failed > 300, "\(outcomes)")
        }
    }

    static let record = #"""
        {"train": {"id": 7, "company": "\u00d6BB", "number_of_cars": 12, "max_speed": 230.5, "in_service": true,
          "built_at": "2004-07-19T11:20:00Z", "tags": ["intercity"], "depot": {"name": "Wien", "capacity": 9}},
         "cars": [{"id": 1}], "meta": {"etag": "x"}}
        """#

    @Test("a single record is read in place, and holds what the tree gives")
    func record() throws {
        let store = Self.store()
        let pipeline = ActionPipeline<Train>(store: store)
        let decoder = pipeline.setup.decoder(coder: FieldCoder(options: pipeline.setup.coding), store: store)
        let body = Data(Self.record.utf8)
        let response = Train.receivedResponse(body, contentType: "application/json", setup: pipeline.setup)
        let located = try #require(pipeline.setup.inPlaceRecord(in: response, decoder: decoder))
        #expect(located.main.id == .int(7) && located.path == "$.train" && located.rootKey == "train")
        #expect(located.container?["meta"] == ["etag": "x"] && located.container?["train"] == nil)
        let read = try Train.merge(recordBody: body, in: Self.store())
        let built = try TreeTrain.merge(recordBody: body, in: Self.store())
        #expect(Self.summary(read) == Self.summary(built) && read.company == "ÖBB")
        // What only the tree decides: no id (a write's answer may lack one), an errors member, not an
        // object, a body that is not one JSON text.
        for text in [
            #"{"train": {"company": "x"}}"#, #"{"errors": {"company": ["is taken"]}}"#,
            #"{"train": {"errors": {"company": ["bad"]}}}"#, #"{"train": [1]}"#, #"{"train": {"id": 1}} 1"#,
        ] {
            let other = Train.receivedResponse(Data(text.utf8), contentType: "application/json", setup: pipeline.setup)
            #expect(pipeline.setup.inPlaceRecord(in: other, decoder: decoder) == nil, "\(text)")
        }
    }

    @Test("damaged single records give what the tree gives: the same values or the same error")
    func recordDifferential() async {
        await onOwnThread {
            let outcomes = Self.compareDamaged(Array(Self.record.utf8), iterations: 1_500, seed: 0x5265_636F) {
                try Self.mergeRecord($0, $1)
            }
            #expect(outcomes.same > 100 && outcomes.failed > 300, "\(outcomes)")
        }
    }

    static func mergeList<Model: ResourceModel>(_ model: Model.Type, _ body: Data) throws -> [[String]] {
        try model.merge(listBody: body, in: store()).map(summary)
    }

    static func mergeRecord<Model: ResourceModel>(_ model: Model.Type, _ body: Data) throws -> [[String]] {
        [summary(try model.merge(recordBody: body, in: store()))]
    }

    @Test("every truncation of a list or a record gives what the tree gives")
    func truncations() throws {
        let list: (any ResourceModel.Type, Data) throws -> [[String]] = { try Self.mergeList($0, $1) }
        let record: (any ResourceModel.Type, Data) throws -> [[String]] = { try Self.mergeRecord($0, $1) }
        for (document, merge) in [(Self.document, list), (Self.record, record)] {
            let bytes = Array(document.utf8)
            for length in 0..<bytes.count {
                let body = Data(bytes[..<length])
                let inPlace = Result { try merge(Train.self, body) }
                let tree = Result { try merge(TreeTrain.self, body) }
                switch (inPlace, tree) {
                case (.failure(let read as APIError), .failure(let built as APIError)):
                    #expect(read.message == built.message.replacingOccurrences(of: "TreeTrain", with: "Train"))
                default:
                    Issue.record("a truncation to \(length) bytes: in place \(inPlace), tree \(tree)")
                }
            }
        }
    }

    /// Damages `original` `iterations` times and merges each result as ``Train`` (in place) and as
    /// ``TreeTrain`` (through the tree): the same summaries, or errors with the same code and message.
    static func compareDamaged(
        _ original: [UInt8], iterations: Int, seed: UInt64,
        merge: (any ResourceModel.Type, Data) throws -> [[String]]
    ) -> (same: Int, failed: Int) {
        let alphabet = Array(#"{}[]":,\ -+.eE0123456789tfnul"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xED, 0xFF]
        var generator = SplitMix(state: seed)
        var outcomes = (same: 0, failed: 0)
        for iteration in 0..<iterations {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: bytes.removeLast(Int.random(in: 1...min(8, bytes.count - 1), using: &generator))
                case 1: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                case 2: bytes.remove(at: position)
                default: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                }
            }
            let body = Data(bytes)
            let inPlace = Result { try merge(Train.self, body) }
            let tree = Result { try merge(TreeTrain.self, body) }
            switch (inPlace, tree) {
            case (.success(let read), .success(let built)):
                #expect(read == built, "iteration \(iteration)")
                outcomes.same += 1
            case (.failure(let readError), .failure(let builtError)):
                let read = readError as? APIError
                let built = builtError as? APIError
                // Messages name the model; the two models differ only in name.
                let builtMessage = built?.message.replacingOccurrences(of: "TreeTrain", with: "Train")
                #expect(read != nil && read?.code == built?.code, "iteration \(iteration)")
                #expect(read?.message == builtMessage, "iteration \(iteration)")
                outcomes.failed += 1
            default:
                Issue.record(
                    "iteration \(iteration): in place \(inPlace), tree \(tree): \(String(decoding: bytes, as: UTF8.self))"
                )
            }
        }
        return outcomes
    }
}
