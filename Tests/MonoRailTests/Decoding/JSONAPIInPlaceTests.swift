import Foundation
import MonoRail
import Testing

/// A list document is read where it lies (each resource object by `JSONAPITextRecord`), falling back
/// to the tree for what only the tree decides: every document must give what its tree gives — the
/// same records, the same errors, nothing merged of a document refused.
@Suite("JSON:API list documents read in place")
struct JSONAPIInPlaceTests {
    typealias Train = Rail.Train
    typealias Depot = Rail.Depot

    static let good =
        #"{"type": "trains", "id": "1", "attributes": {"company": "Kept", "number_of_cars": 5}, "relationships": {"depots": {"data": [{"type": "depots", "id": "1"}]}}}"#

    func store() -> ResourceStore {
        var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
        configuration.conventions = .jsonAPI
        return ResourceStore(configuration: configuration)
    }

    func merge(_ body: String, in store: ResourceStore) throws -> [Train] {
        try Train.merge(listBody: Data(body.utf8), contentType: "application/vnd.api+json", in: store)
    }

    /// Each malformed primary resource object of the single-record tests, second in a list after a
    /// sound one: the error names it at `$.data[1]`, and the sound one is not merged either.
    static let malformedResources: [(String, String)] = [
        (#"{"id": "2", "attributes": {"company": "Changed"}}"#, "no \"type\""),
        (#"{"type": "trains", "lid": "a", "attributes": {"company": "Changed"}}"#, "no \"id\""),
        (#"{"type": "trains", "id": 2, "attributes": {"company": "Changed"}}"#, "must be a non-empty string"),
        (#"{"type": "trains", "id": "", "attributes": {"company": "Changed"}}"#, "must be a non-empty string"),
        (#"{"type": "cars", "id": "2", "attributes": {"occupancy": 3}}"#, "of type \"cars\""),
        (#"{"type": "trains", "id": "2", "attributes": ["company"]}"#, "\"attributes\" must be an object"),
        (#"{"type": "trains", "id": "2", "attributes": {"company": 7}}"#, "company"),
        (
            #"{"type": "trains", "id": "2", "relationships": {"depots": {"data": [{"type": "planes", "id": "1"}]}}}"#,
            "\"planes\", not the related model's"
        ),
        (
            #"{"type": "trains", "id": "2", "relationships": {"depots": {"data": {"type": "depots", "id": "1"}}}}"#,
            "must be an array"
        ),
        (
            #"{"type": "trains", "id": "2", "relationships": {"depots": {"data": [{"type": "depots"}]}}}"#,
            "needs an \"id\""
        ),
        (#"{"type": "trains", "id": "2", "relationships": {"depots": {"data": [{"id": "1"}]}}}"#, "needs a \"type\""),
        (#"{"type": "trains", "id": "2", "relationships": {"depots": ["x"]}}"#, "a relationship must be an object"),
        (#"[{"type": "trains", "id": "2"}]"#, "must be an object"),
    ]

    @Test(
        "a malformed resource object in a list is the tree's typed error, and nothing is merged",
        arguments: malformedResources)
    func malformed(resource: String, reason: String) throws {
        let store = store()
        let kept = try merge(#"{"data": [\#(Self.good)]}"#, in: store)
        kept[0].numberOfCars = 9
        do {
            _ = try merge(
                #"{"data": [{"type": "trains", "id": "1", "attributes": {"company": "Changed"}}, \#(resource)]}"#,
                in: store)
            Issue.record("expected an error")
        } catch let error as APIError {
            #expect(error.code == .decodingFailed)
            #expect(error.message.contains(reason), "\(error.message)")
            #expect(error.message.contains("$.data[1]"), "\(error.message)")
        }
        #expect(store.count == 1)
        #expect(kept[0].company == "Kept")
        #expect(kept[0].numberOfCars == 9)
        #expect(kept[0].$depots.ids == ["1"])
    }

    @Test("a value no field can hold is named where it sits in the resource object")
    func errorPath() throws {
        let store = store()
        do {
            _ = try merge(
                #"{"data": [\#(Self.good), {"type": "trains", "id": "2", "attributes": {"number_of_cars": "many"}}]}"#,
                in: store)
            Issue.record("expected an error")
        } catch let error as APIError {
            #expect(error.decodingFailure?.path == "$.data[1].attributes.number_of_cars")
            #expect(error.decodingFailure?.field == "numberOfCars")
        }
        #expect(store.count == 0)
    }

    @Test("a record listed twice, in order or not, is an inconsistent response, nothing merged")
    func listedTwice() throws {
        let store = store()
        for ids in [["1", "2", "2"], ["2", "1", "2"], ["1", "3", "2", "3"]] {
            let resources = ids.map { #"{"type": "trains", "id": "\#($0)", "attributes": {"company": "x"}}"# }
            do {
                _ = try merge(#"{"data": [\#(resources.joined(separator: ","))]}"#, in: store)
                Issue.record("expected an error for \(ids)")
            } catch let error as APIError {
                #expect(error.code == .inconsistentResponse)
                #expect(error.message.contains("appears twice"), "\(error.message)")
            }
        }
        #expect(store.count == 0)
        let rising = try merge(
            #"{"data": [{"type": "trains", "id": "9"}, {"type": "trains", "id": "10"}, {"type": "trains", "id": "010"}]}"#,
            in: store)
        #expect(rising.map(\.id?.description) == ["9", "10", "010"])
    }

    @Test("broken text anywhere in the document is the parser's error, nothing merged")
    func brokenText() throws {
        let store = store()
        for body in [
            #"{"data": [\#(Self.good), {"type": "trains", "id": "2", "attributes": {"company": "x"}"#,
            #"{"data": [\#(Self.good)], "meta": {"total": 1}} trailing"#,
            #"{"data": [\#(Self.good)], "included": [{"type": "depots", "id": "1", "attributes": {"name": "A\#u{1}"}}]}"#,
            #"{"data": [{"type": "trains", "id": "1", "attributes": {"company": "\#u{0}"}}]}"#,
        ] {
            #expect(throws: APIError.self) { try merge(body, in: store) }
        }
        #expect(store.count == 0)
    }

    @Test("what the tree decides is decided by the tree: escaped keys, keys given twice, members in any order")
    func treeDecides() throws {
        let store = store()
        let trains = try merge(
            #"""
            {"data": [
              {"attributes": {"comp\u0061ny": "Escaped", "number_of_cars": 3}, "id": "1", "type": "trains"},
              {"type": "trains", "id": "2", "attributes": {"company": "First", "company": "Last"}},
              {"type": "trains", "id": "3", "id": "4", "attributes": {"company": "Twice"}},
              {"relationships": {"depots": {"links": {"related": "/trains/5/depots"}, "meta": {"n": 1}}},
               "links": {"self": "/trains/5"}, "meta": {"x": [1, {"y": null}]}, "type": "Trains", "id": "5"},
              {"type": "trains", "id": "6", "relationships": {"depots": {"data": [{"type": "depots", "id": "1", "meta": {"a": 1}}, {"type": "depots", "id": "2"}]}, "unknown": {"data": 5}}},
              {"type": "trains", "id": "7", "relationships": {"depots": null}, "attributes": null},
              {"type": "trains", "id": "8", "relationships": {"depots": {"data": []}}, "attributes": {}},
              {"type": "trains", "id": "9", "relationships": {"depots": {"data": [{"type": "depots", "id": "1"}]}, "depots": {"links": {}}}}
            ]}
            """#, in: store)
        #expect(trains.map(\.id?.description) == ["1", "2", "4", "5", "6", "7", "8", "9"])
        #expect(trains[0].company == "Escaped")
        #expect(trains[0].numberOfCars == 3)
        #expect(trains[1].company == "Last")
        #expect(trains[2].company == "Twice")
        #expect(trains[3].$depots.ids == [])
        #expect(trains[4].$depots.ids == ["1", "2"])
        #expect(trains[5].company == nil)
        #expect(trains[6].$depots.ids == [])
        // Given twice, the relationship is the last one given, which says nothing of its linkage.
        #expect(trains[7].$depots.ids == [])
    }

    @Test("a linkage not carried leaves the relationship as it was; a sparse record leaves its other fields")
    func partialRecords() throws {
        let store = store()
        let first = try merge(#"{"data": [\#(Self.good)]}"#, in: store)[0]
        _ = try merge(
            #"{"data": [{"type": "trains", "id": "1", "attributes": {"max_speed": 80.5}, "relationships": {"depots": {"links": {"related": "/x"}}}}]}"#,
            in: store)
        #expect(first.maxSpeed == 80.5)
        #expect(first.company == "Kept")
        #expect(first.numberOfCars == 5)
        #expect(first.$depots.ids == ["1"])
        #expect(first.changes.isEmpty)
    }

    @Test("included records merge beside a list read in place, and the references resolve to them")
    func included() throws {
        let store = store()
        let trains = try merge(
            #"{"data": [\#(Self.good)], "included": [{"type": "depots", "id": "1", "attributes": {"name": "East"}}], "meta": {"total": 1}}"#,
            in: store)
        #expect(trains[0].depots.map(\.name) == ["East"])
        #expect(store.instance(of: Depot.self, id: 1)?.name == "East")
    }
}
