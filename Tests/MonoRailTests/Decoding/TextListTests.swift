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
}
