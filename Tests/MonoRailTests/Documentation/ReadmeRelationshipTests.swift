import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Observation
import TestModels
import Testing

/// The README's nested-route models, compiled here as written there.
enum ReadmeLibrary {
    // README NESTED BEGIN
    @Resource
    final class Book {
        var title: String?
        @References var author: Author?

        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.conventions.routes.index = "/authors/:author_id/books"  // from the filter
            configuration.conventions.routes.create = "/authors/:author_id/books"  // from book.author
        }
    }

    @Resource
    final class Author {
        var name: String?
        @Has(route: ":path/:id/books") var books: [Book]  // author.$books.load(): GET /authors/1/books
    }
    // README NESTED END

    static let schema = ServerSchema(
        resources: [
            ResourceSchema(name: "author", fields: [FieldSchema(name: "name", type: .string)]),
            ResourceSchema(
                name: "book", fields: [FieldSchema(name: "title", type: .string)],
                relationships: [RelationshipSchema(kind: .belongsTo, name: "author")]),
        ],
        seed: [
            "authors": [["name": "Le Guin"], ["name": "Lem"]],
            "books": [["title": "The Dispossessed", "author_id": 1], ["title": "Solaris", "author_id": 2]],
        ])
}

/// The README's relationship examples, run against the reference server; a test checks they still
/// read as in the README.
@Suite("README relationships", .timeLimit(.minutes(5)))
struct ReadmeRelationshipTests {
    @Test("the examples match the README")
    func matchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeFormatTests.readmeBlocks()
        for marker in ["README NESTED", "README OBSERVED"] {
            let region = source.components(separatedBy: "// \(marker) BEGIN\n")[1]
                .components(separatedBy: "// \(marker) END")[0]
            #expect(blocks.contains(ReadmeFormatTests.normalise(region)), "\(marker)")
        }
    }

    @Test(
        "a list of train.cars is told of a car created elsewhere; any path reads live instances; an assignment is saved with the train"
    )
    func observed() async throws {
        typealias Train = Seed.Train
        typealias Car = Seed.Car
        try await withHarness { harness in
            let store = harness.store
            // README OBSERVED BEGIN
            let train = try await Train.get(id: 1, in: store)
            try await train.$cars.load()  // GET /cars?train_id=1
            withObservationTracking {
                _ = train.cars  // what a SwiftUI list of the train's cars reads
            } onChange: {
                print("train.cars changed")  // a car created, moved, deleted or unloaded, anywhere
            }
            let car = Car()
            car.occupancy = 8
            car.train = train
            try await car.create(in: store)  // POST /cars: the list above is told, and asks nothing
            print(train.cars.count)  // 3

            let listed = try await Car.get(path: "/trains/1/cars", in: store)  // any path, as live instances
            print(listed.contains { $0 === car })  // true

            train.cars = [car]  // the two others point nowhere now, here…
            try await train.save()  // …and on the server: the train's save saves each car it re-pointed
            print(try await Car.get(where: ["train_id": 1], in: store).count)  // 1
            // README OBSERVED END
            #expect(listed.count == 3)
            #expect(listed.contains { $0 === car })
            #expect(train.cars.map(\.id) == [car.id])
            #expect(try await Car.get(where: ["train_id": 1], in: store).map(\.id) == [car.id])
            #expect(!train.hasChanges)
        }
    }

    @Test("the nested-route models read and write at /authors/:id/books")
    func nested() async throws {
        try await withHarness(schema: ReadmeLibrary.schema) { harness in
            let store = harness.store
            let before = harness.journal.count
            let books = try await ReadmeLibrary.Book.get(where: ["author_id": 1], in: store)
            #expect(books.map(\.title) == ["The Dispossessed"])
            let author = try await ReadmeLibrary.Author.get(id: 2, in: store)
            try await author.$books.load()
            #expect(author.books.map(\.title) == ["Solaris"])
            let book = ReadmeLibrary.Book()
            book.title = "His Master's Voice"
            book.author = author
            try await book.create(in: store)
            #expect(author.books.count == 2)
            #expect(
                Array(harness.journal.entries.dropFirst(before)) == [
                    "GET /authors/1/books", "GET /authors/2", "GET /authors/2/books", "POST /authors/2/books",
                ])
        }
    }
}
