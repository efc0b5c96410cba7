import Foundation
import MonoRail
import MonoRailScaffold
import ScaffoldedModels
import TestServer
import Testing

/// `monorail scaffold --openapi` on the documents FastAPI and drf-spectacular write for the test
/// apps, and the models it wrote (Tests/ScaffoldedModels) at work against those same apps.
@Suite("Scaffolding from OpenAPI", .timeLimit(.minutes(5)))
struct OpenAPIScaffoldTests {
    static let scaffolded = repositoryRoot.appendingPathComponent("Tests/ScaffoldedModels")

    /// The files in a folder of Tests/ScaffoldedModels, by name.
    static func committed(_ folder: String) throws -> [String: String] {
        let directory = scaffolded.appendingPathComponent(folder)
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
            files[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    /// The document an app serves, fetched as the command fetches it.
    static func document(at url: URL) async throws -> Data {
        let client = APIClient(baseURL: url)
        return try await client.send(
            APIRequest(
                method: .get, path: APIPath(verbatim: url.absoluteString),
                headers: [.accept: "application/vnd.oai.openapi+json, application/json;q=0.9"])
        ).body
    }

    static func compare(_ output: Scaffold.Output, with folder: String) throws {
        let committed = try committed(folder)
        #expect(Set(output.files.map(\.name)) == Set(committed.keys))
        for file in output.files {
            #expect(
                file.contents == committed[file.name],
                """
                \(file.name) differs from Tests/ScaffoldedModels/\(folder): run `swift run monorail scaffold \
                --openapi <the app's document> --access package --output Tests/ScaffoldedModels/\(folder)` \
                and review the change.
                """)
        }
    }

    @Test("FastAPI's /openapi.json scaffolds exactly the committed Library models, every time")
    func fastAPIDocument() async throws {
        let server = try await PythonServer.fastAPI()
        defer { server.stop() }
        let data = try await Self.document(at: server.baseURL.appendingPathComponent("openapi.json"))
        let output = try Scaffold.models(fromOpenAPI: data, access: .package)
        try Self.compare(output, with: "Library")
        #expect(output.warnings.isEmpty, "\(output.warnings)")
        // The same document gives the same files, whatever order its members come in.
        let again = try Scaffold.models(fromOpenAPI: data, access: .package)
        #expect(again.files == output.files)
        let book = try #require(output.files.first { $0.name == "Book.swift" }?.contents)
        for line in [
            "@References package var author: Author?", "package var price: Decimal?", "package var genre: Genre?",
            "@Field(transform: .dateOnly) package var published: Date?", "package var dimensions: Dimensions?",
            "case nonFiction = \"non-fiction\"",
            "style: .pageNumbers(page: \"page\", size: \"size\"), totalCountKey: \"total\")",
        ] {
            #expect(book.contains(line), "missing: \(line)\n\(book)")
        }
        let author = try #require(output.files.first { $0.name == "Author.swift" }?.contents)
        #expect(author.contains(#"@Has(route: ":path/:id/books") package var books: [Book]"#))
        let configuration = try #require(output.files.first { $0.name == "LibraryConfiguration.swift" }?.contents)
        #expect(configuration.contains("var conventions = ServerConventions.fastAPI"))
        #expect(configuration.contains("conventions.updateMethod = .patch"))
        #expect(configuration.contains(".offsets(limit: \"limit\", offset: \"offset\")"))
    }

    @Test("drf-spectacular's document scaffolds exactly the committed Trains models")
    func drfDocument() async throws {
        let server = try await PythonServer.django()
        defer { server.stop() }
        let data = try await Self.document(at: server.baseURL.appendingPathComponent("schema/"))
        let output = try Scaffold.models(fromOpenAPI: data, access: .package)
        try Self.compare(output, with: "Trains")
        let configuration = try #require(output.files.first { $0.name == "TrainsConfiguration.swift" }?.contents)
        #expect(configuration.contains("var conventions = ServerConventions.djangoREST"))
        #expect(configuration.contains(#"conventions.orderParameter = "ordering""#))
    }

    @Test(
        "the scaffolded Library models against the FastAPI app: CRUD, errors, both pagings, a nested route, offline reads"
    )
    func libraryAtWork() async throws {
        let server = try await PythonServer.fastAPI(extraBooks: 60)
        defer { server.stop() }
        var configuration = MonoRail.Configuration()
        configuration.useLibrary(apiRootURL: server.baseURL)
        configuration.retryPolicy = .none
        let store = ResourceStore(configuration: configuration)

        let author = Author()
        author.name = "N. K. Jemisin"
        try await author.create(in: store)
        let id = try #require(author.id)
        author.name = "Nora K. Jemisin"
        try await author.save()
        try await author.fetch()
        #expect(author.name == "Nora K. Jemisin")
        #expect(author.createdAt != nil)

        let book = Book()
        book.pages = 0
        let refused = try await #require(throws: APIError.self) { try await book.create(in: store) }
        #expect(refused.code == .validationFailed)
        #expect(refused.errors["pages"] == ["Input should be greater than or equal to 1"])
        #expect(book.hasErrors)
        book.title = "The Fifth Season"
        book.pages = 468
        book.author = author
        book.genre = .fiction
        book.price = Decimal(string: "17.99")
        book.published = Date(timeIntervalSince1970: 1_438_387_200)  // 2015-08-01
        book.dimensions = Dimensions(height: 21, width: 14)
        try await book.create(in: store)
        try await book.fetch()
        #expect(book.price == Decimal(string: "17.99"))
        #expect(book.published == Date(timeIntervalSince1970: 1_438_387_200))
        #expect(book.dimensions == Dimensions(height: 21, width: 14))
        #expect(book.$author.id == id)

        let authors = try await Author.query(pageSize: 2, in: store)
        #expect(authors.total == 3)
        try await authors.loadNextPage()
        #expect(authors.instances.count == 3)
        let books = try await Book.query(pageSize: 25, in: store)
        #expect(books.total == 64)
        while books.hasNextPage { try await books.loadNextPage() }
        #expect(Set(books.instances.compactMap(\.id)).count == 64)
        let hers = try await author.$books.load()
        #expect(hers.map(\.title) == ["The Fifth Season"])

        try await book.delete()
        let gone = try await #require(throws: APIError.self) {
            try await Book.get(id: try #require(book.id), in: store)
        }
        #expect(gone.statusCode == 404)

        // Offline: the server is gone, and what was read is still there.
        let online = try await Book.get(in: store)
        server.stop()
        let cached = try await Author.get(id: id, policy: .cacheOnly, in: store)
        #expect(cached.name == "Nora K. Jemisin")
        let offline = try await Book.get(policy: .networkFirst, in: store)
        #expect(offline.map(\.id) == online.map(\.id))
        #expect(!offline.isEmpty)
    }

    @Test("the scaffolded Trains models against the Django REST framework app: CRUD, validation, pages")
    func trainsAtWork() async throws {
        let server = try await PythonServer.django(extraTrains: 60, pageSize: 25)
        defer { server.stop() }
        var configuration = MonoRail.Configuration()
        configuration.useTrains(apiRootURL: server.baseURL)
        configuration.retryPolicy = .none
        let store = ResourceStore(configuration: configuration)

        let train = Train()
        let refused = try await #require(throws: APIError.self) { try await train.create(in: store) }
        #expect(refused.code == .validationFailed)
        #expect(refused.errors["company"] == ["This field is required."])
        train.company = "Scaffolded Rail"
        train.numberOfCars = 3
        try await train.create(in: store)
        train.maxSpeed = 120
        try await train.save()
        try await train.fetch()
        #expect(train.maxSpeed == 120)

        let car = Car()
        car.occupancy = 12
        car.train = train
        try await car.create(in: store)
        let cars = try await Car.get(where: ["train_id": .int(Int64(try #require(train.id?.intValue)))], in: store)
        #expect(cars.map(\.occupancy) == [12])

        let trains = try await Train.query(pageSize: 25, in: store)
        #expect(trains.total == 63)
        while trains.hasNextPage { try await trains.loadNextPage() }
        #expect(trains.instances.count == 63)
        try await car.delete()
        try await train.delete()
    }
}
