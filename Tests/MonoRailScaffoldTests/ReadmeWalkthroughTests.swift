import Foundation
import MonoRail
import MonoRailTesting
import ScaffoldedModels
import TestServer
import Testing

/// The README's "Any API in five minutes": the models `monorail scaffold --openapi` wrote for the
/// FastAPI app (Tests/ScaffoldedModels/Library), used as the README shows, against that app.
@Suite("README: any API in five minutes", .timeLimit(.minutes(5)))
struct ReadmeWalkthroughTests {
    @Test("the walkthrough matches the README")
    func matchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let code = try #require(DocumentationBlocks.region("SCAFFOLD WALKTHROUGH", of: source))
        let readme = code.map {
            $0.replacingOccurrences(
                of: "apiRootURL: apiRoot", with: #"apiRootURL: URL(string: "http://127.0.0.1:8000")!"#)
        }
        #expect(try DocumentationBlocks.all().contains(readme))
    }

    @Test("the walkthrough runs against the FastAPI app, unedited models and all")
    func runs() async throws {
        let server = try await PythonServer.fastAPI()
        defer { server.stop() }
        let apiRoot = server.baseURL
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        // README SCAFFOLD WALKTHROUGH BEGIN
        let store = ResourceStore()
        store.configure { $0.useLibrary(apiRootURL: apiRoot) }

        let book = try await Book.get(id: 1, in: store)  // GET /books/1
        book.genre = .poetry
        try await book.save()  // PATCH /books/1 {"genre": "poetry"}: only what changed

        let books = try await Book.query(pageSize: 50, in: store)  // GET /books?page=1&size=50
        let byAuthor = Dictionary(grouping: books.instances) { $0.$author.id }  // no author loaded
        print(books.total ?? 0, byAuthor.count)  // 3 2
        let kept = try await Book.get(id: 1, policy: .cacheOnly, in: store)  // offline: no request

        do {
            try await Book().create(in: store)
        } catch let error as APIError where error.code == .validationFailed {
            print(error.errors["title"])  // ["Field required"], from 422 {"detail": [{"loc": ["body", "title"], …}]}
        }
        // README SCAFFOLD WALKTHROUGH END
        #expect(printed == ["3 2", #"["Field required"]"#])
        #expect(kept === book)
        // What the app received: the save's PATCH held the one change; the create, nothing never set.
        let writes: [JSONValue] = try await store.client.get("/_writes")
        #expect(
            writes.map { "\($0["method"]?.stringValue ?? "") \($0["path"]?.stringValue ?? "")" } == [
                "PATCH /books/1", "POST /books",
            ])
        #expect(try JSONParser().parse(Data((writes[0]["body"]?.stringValue ?? "").utf8)) == ["genre": "poetry"])
        #expect(try JSONParser().parse(Data((writes[1]["body"]?.stringValue ?? "").utf8)) == [:])
        #expect(store.instances(of: Author.self).isEmpty)
        try await book.fetch()
        #expect(book.genre == .poetry)
        #expect(book.title == "The Left Hand of Darkness")
    }

    @Test("the live example matches the README")
    func liveMatchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let code = try #require(DocumentationBlocks.region("LIVE FROM THE SERVER", of: source))
        #expect(try DocumentationBlocks.all().contains(code))
    }

    @Test("the live example runs against the FastAPI app's change feed: another client's writes arrive by themselves")
    func liveRuns() async throws {
        let server = try await PythonServer.fastAPI()
        defer { server.stop() }
        let apiRoot = server.baseURL
        let another = ResourceStore()
        another.configure { $0.useLibrary(apiRootURL: apiRoot) }
        let store = ResourceStore()

        // README LIVE FROM THE SERVER BEGIN
        store.configure {
            $0.useLibrary(apiRootURL: apiRoot)
            $0.liveUpdates = .serverSentEvents(path: "/changes")  // event: book.updated, data: {"id": 1, …}
        }
        let books = try await Book.query(in: store)  // GET /books
        try await store.liveUpdates.connect()  // GET /changes, resumed from the last event merged
        // README LIVE FROM THE SERVER END

        // Another client of the same app: what it writes reaches `store` with no request of its own.
        let theirs = try await Book.get(id: 1, in: another)
        theirs.title = "The Left Hand of Darkness, annotated"
        try await theirs.save()
        let made = Book()
        made.title = "The Word for World Is Forest"
        made.pages = 189
        try await made.create(in: another)
        try await Book.get(id: 2, in: another).delete()
        #expect(try await eventually { books.instances.count == 3 && books.instances.last?.pages == 189 })
        #expect(books.instances.first?.title == "The Left Hand of Darkness, annotated")
        #expect(!books.instances.contains { $0.id == 2 })
        #expect(store.liveUpdates.lastError == nil)
        store.liveUpdates.disconnect()
    }
}
