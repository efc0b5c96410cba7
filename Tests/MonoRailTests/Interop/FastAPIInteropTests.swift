import Foundation
import MonoRail
import TestModels
import TestServer
import Testing

/// MonoRail's models against a real FastAPI app (`Tests/FastAPIInterop`) with the `.fastAPI` preset:
/// bare bodies, no trailing slashes, `PATCH` with only changes, FastAPI's error shapes, pages by
/// `limit`/`offset` with `X-Total-Count` and by fastapi-pagination's envelope, a nested route.
@Suite("FastAPI interop", .timeLimit(.minutes(5)))
struct FastAPIInteropTests {
    func withFastAPI(
        extraBooks: Int = 0, _ body: (ResourceStore, PythonServer) async throws -> Void
    ) async throws {
        let server = try await PythonServer.fastAPI(extraBooks: extraBooks)
        defer { server.stop() }
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .fastAPI
        try await body(ResourceStore(configuration: configuration), server)
    }

    /// How many responses of each status the app sent.
    func statuses(of server: PythonServer, in store: ResourceStore) async throws -> [String: Int] {
        try await store.client.get("/_statuses")
    }

    static func utcDay(_ year: Int, _ month: Int, _ day: Int) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.date(from: DateComponents(year: year, month: month, day: day))
    }

    @Test("CRUD with bare bodies and no redirects; PATCH sends only the changes; dates as Pydantic writes them")
    func crud() async throws {
        try await withFastAPI { store, server in
            let author = Author()
            author.name = "Octavia E. Butler"
            author.born = Self.utcDay(1947, 6, 22)
            try await author.create(in: store)
            let id = try #require(author.id)
            #expect(author.born == Self.utcDay(1947, 6, 22))
            #expect(author.createdAt != nil)
            #expect(try await Author.get(id: id, in: store) === author)

            author.name = "Octavia Estelle Butler"
            try await author.save()
            #expect(!author.hasChanges)
            try await author.fetch()
            #expect(author.name == "Octavia Estelle Butler")
            #expect(author.born == Self.utcDay(1947, 6, 22))

            let existing = try await Author.get(id: 1, in: store)
            #expect(existing.name == "Ursula K. Le Guin")
            #expect(existing.born == Self.utcDay(1929, 10, 21))

            try await author.delete()
            let error = try await #require(throws: APIError.self) { try await Author.get(id: id, in: store) }
            #expect(error.statusCode == 404)
            #expect(error.message.hasSuffix("404 Not Found: author \(id) not found"))

            let counts = try await statuses(of: server, in: store)
            #expect(counts["307"] == nil)
            #expect(counts["200"] != nil && counts["201"] == 1 && counts["204"] == 1)
        }
    }

    @Test("FastAPI's 422 read as validation errors, keyed by loc, nested loc dotted")
    func validation() async throws {
        try await withFastAPI { store, _ in
            let book = Book()
            book.dimensions = Book.Dimensions(width: -1, height: 20)
            let error = try await #require(throws: APIError.self) { try await book.create(in: store) }
            #expect(error.code == .validationFailed)
            #expect(error.statusCode == 422)
            // A create leaves out what was never set: the title is missing, not null.
            #expect(error.errors["title"] == ["Field required"])
            #expect(error.errors["dimensions.width"] == ["Input should be greater than 0"])
            #expect(book.hasErrors)
            #expect(book.errors["title"] == ["Field required"])
            #expect(
                error.errors.fullMessages == [
                    "Title: Field required", "Dimensions width: Input should be greater than 0",
                ])

            book.title = "Kindred"
            book.dimensions = Book.Dimensions(width: 13, height: 20)
            try await book.create(in: store)
            #expect(!book.hasErrors)
            book.pages = 0
            let refused = try await #require(throws: APIError.self) { try await book.save() }
            #expect(refused.errors["pages"] == ["Input should be greater than or equal to 1"])
            #expect(book.pages == 0)
            #expect(book.hasChanges)
        }
    }

    @Test("a string detail is the error's reason; 401 has its own code")
    func reasons() async throws {
        try await withFastAPI { store, _ in
            let anonymous = try await #require(throws: APIError.self) {
                let _: JSONValue = try await store.client.get("/me")
            }
            #expect(anonymous.code == .unauthorized)
            #expect(anonymous.message == "the server answered 401 Unauthorized: Not authenticated")
            let expired = try await #require(throws: APIError.self) {
                try await store.client.send(
                    APIRequest(method: .get, path: "/me", headers: [.authorization: "Bearer stale"]))
            }
            #expect(expired.code == .unauthorized)
            #expect(expired.message.hasSuffix(": Token expired"))
        }
    }

    @Test("fields as Pydantic sends them: a decimal as a string, an enum, a date alone, a nested value")
    func fields() async throws {
        try await withFastAPI { store, _ in
            let book = try await Book.get(id: 1, in: store)
            #expect(book.title == "The Left Hand of Darkness")
            #expect(book.price == Decimal(string: "12.50"))
            #expect(book.genre == .fiction)
            #expect(book.published == Self.utcDay(1969, 3, 1))
            #expect(try await book.$author.load()?.name == "Ursula K. Le Guin")

            book.genre = .nonFiction
            book.published = Self.utcDay(1970, 1, 2)
            try await book.save()
            try await book.fetch()
            #expect(book.genre == .nonFiction)
            #expect(book.published == Self.utcDay(1970, 1, 2))
        }
    }

    @Test("a date-only field encodes as the date alone; a plain Date field as a date-time")
    func dateEncoding() throws {
        let book = Book()
        book.published = Self.utcDay(1969, 3, 1)
        #expect(try book.json["published"] == "1969-03-01")
        let author = Author()
        author.born = Self.utcDay(1929, 10, 21)
        #expect(try author.json["born"] == "1929-10-21T00:00:00.000Z")
    }

    @Test("limit/offset pages with X-Total-Count; fastapi-pagination's envelope; filters; a nested route")
    func lists() async throws {
        try await withFastAPI(extraBooks: 120) { store, server in
            let authors = try await Author.query(pageSize: 1, in: store)
            #expect(authors.instances.map(\.name) == ["Ursula K. Le Guin"])
            #expect(authors.total == 2)
            try await authors.loadNextPage()
            #expect(authors.instances.map(\.name) == ["Ursula K. Le Guin", "Italo Calvino"])
            #expect(!authors.hasNextPage)

            let books = try await Book.query(pageSize: 50, in: store)
            #expect(books.total == 123)
            #expect(books.instances.count == 50)
            while books.hasNextPage { try await books.loadNextPage() }
            #expect(books.instances.count == 123)
            #expect(Set(books.instances.compactMap(\.id)).count == 123)

            let all = try await Book.getAll(in: store)
            #expect(all.count == 123)

            let hers = try await Book.get(where: ["author_id": 1], in: store)
            #expect(hers.map(\.title) == ["The Left Hand of Darkness", "The Dispossessed"])
            let long = try await Book.query(where: ["pages": .atLeast(215)], in: store)
            #expect(long.instances.count == 2 + 5)

            let author = try await Author.get(id: 1, in: store)
            let nested = try await author.$books.load()
            #expect(nested.map(\.title) == ["The Left Hand of Darkness", "The Dispossessed"])
            #expect(nested.first === hers.first)

            let counts = try await statuses(of: server, in: store)
            #expect(counts["307"] == nil)
        }
    }
}
