import Foundation
import MonoRail
import MonoRailScaffold
import TestServer
import Testing

@Suite("monorail scaffold", .timeLimit(.minutes(5)))
struct ScaffoldTests {
    static let sample: JSONValue = [
        "trains": [
            [
                "id": 1, "company": "MonoRail Co.", "number_of_cars": 5, "max_speed": 46.8, "in_service": true,
                "built_at": "2024-05-06T07:08:09.123Z", "tags": ["monorail"], "depot_id": 4, "yard_ids": [1, 2],
                "cars": [["id": 1, "occupancy": 40, "needs_repairs": false, "train_id": 1]],
                "conductor": ["id": 1, "name": "Bill", "train_id": 1], "meta": nil, "class": "express",
            ],
            ["id": 2, "company": "DB", "number_of_cars": 12, "max_speed": 300, "meta": ["a": 1]],
        ]
    ]

    @Test("infers types, references and embedded models, singularizing names")
    func generates() throws {
        let source = try Scaffold.source(from: Self.sample)
        for line in [
            "final class Train {", "var company: String?", "var numberOfCars: Int?", "var maxSpeed: Double?",
            "var inService: Bool?", "var builtAt: Date?", "var tags: [String]?", "@References var depot: Depot?",
            "@References(.many) var yards: [Yard]", "@Has(.embedsMany) var cars: [Car]",
            "@Has(.embedsOne) var conductor: Conductor?", "var meta: JSONValue?", "var `class`: String?",
            "final class Car {", "var occupancy: Int?", "@References var train: Train?", "final class Conductor {",
            "final class Depot {", "final class Yard {",
        ] {
            #expect(source.contains(line), "missing: \(line)\n\(source)")
        }
        #expect(!source.contains("var id"))
    }

    @Test("the generated source compiles against MonoRail")
    func compiles() async throws {
        let source = try Scaffold.source(from: Self.sample)
        let result = try await typecheck(["Models.swift": source + "\nlet check: [Car] = Train().cars\n"])
        #expect(result.status == 0, "\(result.output)\n\(source)")
    }

    @Test("a bare record and a bare array take the given name")
    func names() throws {
        #expect(try Scaffold.source(from: ["id": 1, "title": "Hi"], name: "post").contains("final class Post {"))
        #expect(try Scaffold.source(from: [["id": 1, "x": 1]], name: "point").contains("final class Point {"))
        #expect(throws: Scaffold.Failure.self) { try Scaffold.source(from: "text") }
    }

    @Test("a sample's model is named from its URL's path: ids, versions and extensions passed over")
    func pathNames() {
        #expect(Scaffold.modelName(fromPath: "/books/1") == "Book")
        #expect(Scaffold.modelName(fromPath: "/api/v1/train_cars?page=2") == "TrainCar")
        #expect(Scaffold.modelName(fromPath: "/people/6F1E6D6A-7B3C-4E4B-9C1F-2A4B5C6D7E8F") == "Person")
        #expect(Scaffold.modelName(fromPath: "/books.json") == "Book")
        #expect(Scaffold.modelName(fromPath: "/v2/42") == nil)
        #expect(Scaffold.modelName(fromPath: "book") == "Book")
    }

    @Test("dates as APIs send them, names that are no Swift names, and one output however the keys come")
    func samples() async throws {
        let sample: JSONValue = [
            "published": "1968-11-01", "updated": "2024-05-06T07:08:09", "model/authors": "x", "errors": ["a"],
            "2fa": true, "class": "c",
        ]
        let source = try Scaffold.source(from: sample, defaultName: "book")
        for line in [
            "final class Book {", "var published: Date?", "var updated: Date?",
            "@Field(key: \"model/authors\") var modelAuthors: String?",
            "@Field(key: \"errors\") var errorsValue: [String]?",
            "@Field(key: \"2fa\") var _2fa: Bool?",
        ] {
            #expect(source.contains(line), "missing: \(line)\n\(source)")
        }
        let result = try await typecheck(["Book.swift": source])
        #expect(result.status == 0, "\(result.output)\n\(source)")
        // Two lists of records: the first key in order names the main model, every time.
        let two: JSONValue = ["zebras": [["id": 1]], "apples": [["id": 2, "crisp": true]]]
        let outputs = Set((0..<20).map { _ in (try? Scaffold.source(from: two)) ?? "" })
        #expect(outputs.count == 1)
        #expect(outputs.first?.contains("final class Apple {") == true)
        #expect(throws: Scaffold.Failure.self) { try Scaffold.source(from: [] as JSONValue) }
    }
}
