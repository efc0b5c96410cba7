import Foundation
import MonoRail
import MonoRailScaffold
import Testing

/// What a document says of its API becomes configuration: keys, nested routes, cursors, key style.
@Suite("Scaffolding conventions from OpenAPI", .timeLimit(.minutes(5)))
struct OpenAPIConventionTests {
    typealias Document = OpenAPIHostileTests

    static func list(of schema: String, envelope: [String: JSONValue]? = nil, parameters: [String] = []) -> JSONValue {
        let array: JSONValue = ["type": "array", "items": Document.reference(schema)]
        var body = array
        if var envelope {
            envelope["items"] = array
            body = ["type": "object", "properties": .object(envelope)]
        }
        return [
            "parameters": .array(parameters.map { ["name": .string($0), "in": "query"] }),
            "responses": Document.returning(body)["responses"] ?? nil,
        ]
    }

    @Test("a key from the item path, a resource only reachable nested, cursor pages, and camelCase keys")
    func conventions() async throws {
        let book: JSONValue = [
            "type": "object",
            "required": ["isbn"],
            "properties": [
                "isbn": ["type": "string"], "title": ["type": "string"], "authorId": ["type": "integer"],
                "publishedOn": ["type": "string", "format": "date"],
            ],
        ]
        let author: JSONValue = [
            "type": "object", "properties": ["id": ["type": "integer"], "fullName": ["type": "string"]],
        ]
        let chapter: JSONValue = [
            "type": "object", "properties": ["id": ["type": "integer"], "heading": ["type": "string"]],
        ]
        let cursorEnvelope: [String: JSONValue] = ["nextCursor": ["type": ["string", "null"]]]
        let paths: [String: JSONValue] = [
            "/books": ["get": Self.list(of: "Book", envelope: cursorEnvelope, parameters: ["cursor", "limit"])],
            "/books/{isbn}": [
                "get": Document.returning(Document.reference("Book")),
                "put": Document.returning(Document.reference("Book")),
            ],
            "/authors": ["get": Self.list(of: "Author")],
            "/authors/{id}": ["get": Document.returning(Document.reference("Author"))],
            "/books/{isbn}/chapters": ["get": Self.list(of: "Chapter")],
            "/books/{isbn}/chapters/{id}": ["get": Document.returning(Document.reference("Chapter"))],
        ]
        let output = try Scaffold.models(
            fromOpenAPI: Document.document(
                paths: paths, schemas: ["Book": book, "Author": author, "Chapter": chapter], title: "Shelf"))
        let files = Dictionary(uniqueKeysWithValues: output.files.map { ($0.name, $0.contents) })
        #expect(Set(files.keys) == ["Book.swift", "Author.swift", "Chapter.swift", "ShelfConfiguration.swift"])
        let bookSource = try #require(files["Book.swift"])
        for line in [
            #"@Resource(primaryKey: "isbn")"#, #"@References(key: "authorId") var author: Author?"#,
            "@Field(transform: .dateOnly) var publishedOn: Date?",
            #"@Has(route: ":path/:id/chapters") var chapters: [Chapter]"#,
        ] {
            #expect(bookSource.contains(line), "missing: \(line)\n\(bookSource)")
        }
        #expect(!bookSource.contains("var isbn"))
        let chapterSource = try #require(files["Chapter.swift"])
        for line in [
            #"configuration.conventions.routes.index = "/books/:isbn/chapters""#,
            #"configuration.conventions.routes.show = "/books/:isbn/chapters/:id""#,
        ] {
            #expect(chapterSource.contains(line), "missing: \(line)\n\(chapterSource)")
        }
        let configuration = try #require(files["ShelfConfiguration.swift"])
        for line in [
            #"style: .cursor(parameter: "cursor", size: "limit", nextCursorKey: "nextCursor"))"#,
            "coding.keyMapping = .identity", "conventions.updateMethod = .put",
        ] {
            #expect(configuration.contains(line), "missing: \(line)\n\(configuration)")
        }
        let result = try await typecheck(files)
        #expect(result.status == 0, "\(result.output)\n\(files.values.joined(separator: "\n"))")
    }
}
