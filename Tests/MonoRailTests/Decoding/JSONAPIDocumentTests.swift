import Foundation
import MonoRail
import MonoRailTesting
import Testing

/// A note on a train or a car: a polymorphic relationship.
@Resource(name: "note")
final class TrainNote {
    var body: String?
    @References(polymorphic: true) var subject: (any ResourceModel)?
}

/// JSON:API documents no real server sends on purpose: each gives a typed error and leaves the
/// store and every live instance as they were — nothing of a refused document is merged, not even
/// the parts of it that were fine.
@Suite("JSON:API documents, malformed and compound", .timeLimit(.minutes(5)))
struct JSONAPIDocumentTests {
    typealias Train = Rail.Train
    typealias Car = Rail.Car

    static let good = #"""
        {"data": {"type": "trains", "id": "1", "attributes": {"company": "MonoRail Co.", "number_of_cars": 5},
         "relationships": {"depots": {"data": [{"type": "depots", "id": "1"}]}}}}
        """#

    /// Loads train 1, answers the next read with `body`, and checks that it fails changing nothing.
    func expectRefused(
        _ body: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> APIError? {
        var caught: APIError?
        try await withCanned(conventions: .jsonAPI) { server, store in
            server.respond(to: "GET /trains/1", contentType: "application/vnd.api+json", body: Self.good)
            let train = try await Train.get(id: 1, in: store)
            train.maxSpeed = 50  // a local edit that must survive
            server.respond(to: "GET /trains/1", contentType: "application/vnd.api+json", body: body)
            let before = (store.count, train.company, train.numberOfCars, train.$depots.ids, train.changes)
            do {
                _ = try await Train.get(id: 1, in: store)
                Issue.record("expected an error", sourceLocation: sourceLocation)
            } catch let error as APIError {
                caught = error
            }
            #expect(store.count == before.0, sourceLocation: sourceLocation)
            #expect(train.company == before.1, sourceLocation: sourceLocation)
            #expect(train.numberOfCars == before.2, sourceLocation: sourceLocation)
            #expect(train.$depots.ids == before.3, sourceLocation: sourceLocation)
            #expect(train.maxSpeed == 50, sourceLocation: sourceLocation)
            #expect(train.changes == before.4, sourceLocation: sourceLocation)
            #expect(store.instance(of: Train.self, id: 1) === train, sourceLocation: sourceLocation)
        }
        return caught
    }

    static let malformedDocuments: [(String, String)] = [
        (#"{"data": {"id": "1", "attributes": {"company": "Changed"}}}"#, "no \"type\""),
        (#"{"data": {"type": "trains", "lid": "a", "attributes": {"company": "Changed"}}}"#, "no \"id\""),
        (#"{"data": {"type": "trains", "id": 1, "attributes": {"company": "Changed"}}}"#, "must be a non-empty string"),
        (#"{"data": [{"type": "trains", "id": "1"}]}"#, "expected one resource object"),
        (#"{"data": {"type": "cars", "id": "1", "attributes": {"occupancy": 3}}}"#, "of type \"cars\""),
        (#"{"meta": {"note": "no data"}}"#, "no primary data"),
        (#"{"data": {"type": "trains", "id": "1", "attributes": ["company"]}}"#, "\"attributes\" must be an object"),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}, "relationships": {"depots": {"data": [{"type": "planes", "id": "1"}]}}}}"#,
            "\"planes\", not the related model's"
        ),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}, "relationships": {"depots": {"data": {"type": "depots", "id": "1"}}}}}"#,
            "must be an array"
        ),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}, "relationships": {"depots": {"data": [{"type": "depots"}]}}}}"#,
            "needs an \"id\" string"
        ),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}}, "included": [{"type": "depots", "id": "1", "attributes": {"name": "A"}}, {"type": "depots", "id": "1", "attributes": {"name": "B"}}]}"#,
            "included twice with different members"
        ),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}}, "included": [{"type": "depots", "attributes": {"name": "A"}}]}"#,
            "no \"id\""
        ),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}}, "included": {"type": "depots", "id": "1"}}"#,
            "\"included\" must be an array"
        ),
        (
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": "Changed"}}, "included": [{"type": "depots", "id": "1", "attributes": {"name": 7}}]}"#,
            "name"
        ),
    ]

    @Test("a malformed document is a typed error, and nothing of it is merged", arguments: malformedDocuments)
    func malformed(body: String, reason: String) async throws {
        let error = try await expectRefused(body)
        #expect(error?.code == .decodingFailed)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("nesting 10,000 deep inside an attribute is refused by the parser's limit, no crash")
    func deepNesting() async throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let error = try await expectRefused(
            #"{"data": {"type": "trains", "id": "1", "attributes": {"company": \#(deep)}}}"#)
        #expect(error?.code == .decodingFailed)
    }

    @Test("a compound document with cycles merges each record once: cars link their train, the train its cars")
    func cycles() async throws {
        try await withCanned(conventions: .jsonAPI) { server, store in
            var cars: [String] = []
            var linkage: [String] = []
            for id in 1...10_000 {
                linkage.append(#"{"type": "cars", "id": "\#(id)"}"#)
                cars.append(
                    #"{"type": "cars", "id": "\#(id)", "attributes": {"occupancy": \#(id)}, "relationships": {"train": {"data": {"type": "trains", "id": "1"}}}}"#
                )
            }
            let train =
                #"{"type": "trains", "id": "1", "attributes": {"company": "Long"}, "relationships": {"cars": {"data": [\#(linkage.joined(separator: ","))]}}}"#
            // The train is included again beside the cars: the same members, kept once.
            server.respond(
                to: "GET /trains/1?include=cars", contentType: "application/vnd.api+json",
                body: #"{"data": \#(train), "included": [\#(cars.joined(separator: ",")), \#(train)]}"#)
            let loaded = try await Train.get(id: 1, include: ["cars"], in: store)
            #expect(loaded.cars.count == 10_000)
            #expect(loaded.cars.first?.train === loaded)
            #expect(store.count == 10_001)
        }
    }

    @Test("a parent's to-many linkage points the included children at it when they name no parent themselves")
    func parentLinkage() async throws {
        try await withCanned(conventions: .jsonAPI) { server, store in
            server.respond(
                to: "GET /trains/1?include=cars", contentType: "application/vnd.api+json",
                body: #"""
                    {"data": {"type": "trains", "id": "1", "attributes": {"company": "MonoRail Co."},
                              "relationships": {"cars": {"data": [{"type": "cars", "id": "5"}, {"type": "cars", "id": "6"}],
                                                         "links": {"related": "/elsewhere/trains/1/cars"}}}},
                     "included": [{"type": "cars", "id": "5", "attributes": {"occupancy": 5}},
                                  {"type": "cars", "id": "6", "attributes": {"occupancy": 6}}]}
                    """#)
            let train = try await Train.get(id: 1, include: ["cars"], in: store)
            #expect(train.cars.map(\.occupancy) == [5, 6])
            #expect(train.cars.allSatisfy { $0.$train.id == "1" && !$0.hasChanges })
        }
    }

    @Test("a polymorphic relationship resolves its model by the linkage's type")
    func polymorphic() async throws {
        try await withScriptedServer {
            $0.transport = transportUnderTest
            $0.conventions = .jsonAPI
            $0.models.register(Train.self, Car.self)
        } _: { server, store in
            server.respond(
                to: "GET /notes?include=subject", contentType: "application/vnd.api+json",
                body: #"""
                    {"data": [{"type": "notes", "id": "1", "attributes": {"body": "Smooth"},
                               "relationships": {"subject": {"data": {"type": "trains", "id": "1"}}}},
                              {"type": "notes", "id": "2", "attributes": {"body": "Squeaky"},
                               "relationships": {"subject": {"data": {"type": "cars", "id": "2"}}}},
                              {"type": "notes", "id": "3", "attributes": {"body": "Lost"},
                               "relationships": {"subject": {"data": null}}}],
                     "included": [{"type": "trains", "id": "1", "attributes": {"company": "MonoRail Co."}},
                                  {"type": "cars", "id": "2", "attributes": {"occupancy": 2}}]}
                    """#)
            let notes = try await TrainNote.get(where: [:], include: ["subject"], in: store)
            #expect((notes[0].subject as? Train)?.company == "MonoRail Co.")
            #expect((notes[1].subject as? Car)?.occupancy == 2)
            #expect(notes[2].subject == nil)

            server.respond(
                to: "PATCH /notes/2", contentType: "application/vnd.api+json",
                body:
                    #"{"data": {"type": "notes", "id": "2", "relationships": {"subject": {"data": {"type": "trains", "id": "1"}}}}}"#
            )
            notes[1].subject = notes[0].subject
            try await notes[1].save()
            let patch = try #require(server.requests.last { $0.hasPrefix("PATCH /notes/2") })
            #expect(
                try recordedBody(patch)
                    == [
                        "data": [
                            "type": "notes", "id": "2",
                            "relationships": ["subject": ["data": ["type": "trains", "id": "1"]]],
                        ]
                    ])
            #expect(notes[1].subject === notes[0].subject)
        }
    }

    @Test("records read from documents are kept by the record cache as plain records, and read back from it")
    func cached() async throws {
        try await withCanned(conventions: .jsonAPI) { server, store in
            server.respond(
                to: "GET /trains?include=depots", contentType: "application/vnd.api+json",
                body: #"""
                    {"data": [{"type": "trains", "id": "1", "attributes": {"company": "MonoRail Co.", "number_of_cars": 5},
                               "relationships": {"depots": {"data": [{"type": "depots", "id": "4"}]}}}],
                     "included": [{"type": "depots", "id": "4", "attributes": {"name": "East", "city": "Berlin"}}]}
                    """#)
            let trains = try await Train.get(where: [:], include: ["depots"], in: store)
            #expect(trains.first?.depots.first?.name == "East")
            // Another store on the same record cache: no live instance, every record read from the cache.
            let other = ResourceStore(configuration: store.configuration)
            let cached = try await Train.get(where: [:], include: ["depots"], policy: .cacheOnly, in: other)
            #expect(cached.map(\.company) == ["MonoRail Co."])
            #expect(cached.first?.numberOfCars == 5)
            #expect(cached.first?.$depots.ids == ["4"])
            #expect(try await Rail.Depot.get(id: 4, policy: .cacheOnly, in: other).city == "Berlin")
        }
    }

    @Test("an included type no model of the store has is left out, and the rest merges")
    func unknownIncludedType() async throws {
        try await withCanned(conventions: .jsonAPI) { server, store in
            server.respond(
                to: "GET /trains/1?include=planes%2Cdepots", contentType: "application/vnd.api+json",
                body: #"""
                    {"data": {"type": "trains", "id": "1", "attributes": {"company": "MonoRail Co."},
                              "relationships": {"depots": {"data": [{"type": "depots", "id": "4"}]}}},
                     "included": [{"type": "planes", "id": "1", "attributes": {"wings": 2}},
                                  {"type": "depots", "id": "4", "attributes": {"name": "East"}}]}
                    """#)
            let train = try await Train.get(id: 1, include: ["planes", "depots"], in: store)
            #expect(train.company == "MonoRail Co.")
            #expect(train.depots.map(\.name) == ["East"])
        }
    }

    @Test("a save sends a resource object: its type, id, changed attributes, and relationships as linkage")
    func requestDocument() async throws {
        try await withCanned(conventions: .jsonAPI) { server, store in
            server.respond(to: "GET /trains/1", contentType: "application/vnd.api+json", body: Self.good)
            let train = try await Train.get(id: 1, in: store)
            server.respond(to: "PATCH /trains/1", status: 204, contentType: "application/vnd.api+json", body: "")
            train.maxSpeed = 80
            try await train.save()
            let line = try #require(server.requests.last { $0.hasPrefix("PATCH /trains/1") })
            #expect(
                try recordedBody(line)
                    == ["data": ["type": "trains", "id": "1", "attributes": ["max_speed": 80]]])
            #expect(!train.hasChanges)

            let car = Car()
            car.occupancy = 3
            car.train = train
            server.respond(
                to: "POST /cars", status: 201, contentType: "application/vnd.api+json",
                body: #"""
                    {"data": {"type": "cars", "id": "7", "attributes": {"occupancy": 3},
                     "relationships": {"train": {"data": {"type": "trains", "id": "1"}}}}}
                    """#)
            try await car.create(in: store)
            let post = try #require(server.requests.last { $0.hasPrefix("POST /cars") })
            #expect(
                try recordedBody(post)
                    == [
                        "data": [
                            "type": "cars", "attributes": ["occupancy": 3],
                            "relationships": ["train": ["data": ["type": "trains", "id": "1"]]],
                        ]
                    ])
            #expect(car.id == "7")
            #expect(train.cars.contains { $0 === car })
        }
    }
}
