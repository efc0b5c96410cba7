import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// The examples of the Concurrency and Testing-your-app articles, run here; a test checks each one
/// still reads as in its article.
@Suite("DocC article examples", .timeLimit(.minutes(5)))
struct ArticleExampleTests {
    static let articles = [
        "MonoRail/Documentation.docc/Concurrency", "MonoRailTesting/Documentation.docc/TestingYourApp",
    ]
    static let regions = [
        "CONCURRENT TASKS", "DELIVERY", "BLOCKING", "TEST STORE", "TEST SCHEMA", "TEST FAULTS", "TEST SCRIPTED",
    ]

    @Test("the examples match the articles")
    func matchArticles() throws {
        var blocks: [[String]] = []
        for article in Self.articles {
            let url = repositoryRoot.appendingPathComponent("Sources/\(article).md")
            let text = try String(contentsOf: url, encoding: .utf8)
            blocks += text.components(separatedBy: "```swift\n").dropFirst().map {
                ReadmeFormatTests.normalise($0.components(separatedBy: "```")[0])
            }
        }
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        for region in Self.regions {
            let parts = source.components(separatedBy: "// ARTICLE \(region) BEGIN\n")
            try #require(parts.count == 2, "no region \(region)")
            let code = ReadmeFormatTests.normalise(parts[1].components(separatedBy: "// ARTICLE \(region) END")[0])
            #expect(blocks.contains(code), "the article's block \(region) differs from the tested code")
        }
        #expect(blocks.count == Self.regions.count, "an article block has no test")
    }

    @Test("Concurrency: one instance from many tasks, delivery on the main actor, blocking calls")
    func concurrency() async throws {
        try await withHarness { harness in
            let store = harness.store
            // ARTICLE CONCURRENT TASKS BEGIN
            let train = try await Train.get(id: 1, in: store)
            try await withThrowingTaskGroup(of: Train.self) { group in
                group.addTask { try await Train.get(id: 1, in: store) }  // another task, the same instance
                group.addTask { try await train.fetch().value }
                for try await answer in group { precondition(answer === train) }
            }
            // ARTICLE CONCURRENT TASKS END

            // ARTICLE DELIVERY BEGIN
            store.configure { $0.delivery = .mainActor }  // MonoRail.configure for the default store
            // ARTICLE DELIVERY END
            #expect(store.configuration.delivery == .mainActor)

            let saved: Double? = try await onPlainThread {
                // ARTICLE BLOCKING BEGIN
                let train = try Train.blocking(in: store).get(id: 1)  // Train.blocking for the default store
                train.maxSpeed = 55.5
                try train.blocking.save()
                // ARTICLE BLOCKING END
                return train.maxSpeed
            }
            #expect(saved == 55.5)
            #expect(train.maxSpeed == 55.5)
            #expect(try harness.server.store.find("trains", id: "1")?["max_speed"] == 55.5)
        }
    }

    @Test("Testing your app: a server and a store per test, a schema of your own, faults, scripted answers")
    func testingYourApp() async throws {
        // ARTICLE TEST STORE BEGIN
        try await withReferenceServer(schema: .trains) { api in
            let train = try await Train.get(id: 1, in: api.store)
            train.maxSpeed = 99
            try await train.save()

            #expect(api.journal.entries.last == "PUT /trains/1")
            #expect(try api.server.store.find("trains", id: "1")?["max_speed"] == 99)
        }
        // ARTICLE TEST STORE END

        // ARTICLE TEST SCHEMA BEGIN
        let schema = ServerSchema(
            resources: [
                ResourceSchema(name: "note", fields: [FieldSchema(name: "title", type: .string, required: true)])
            ],
            seed: ["notes": [["title": "Hello"]]])
        try await withReferenceServer(schema: schema) { api in
            let untitled = Note()
            await #expect(throws: APIError.self) { try await untitled.create(in: api.store) }
            #expect(untitled.errors["title"].isEmpty == false)
        }
        // ARTICLE TEST SCHEMA END
        try await withReferenceServer(schema: schema) { api in
            let note = try await Note.get(id: 1, in: api.store)
            #expect(note.title == "Hello")
        }

        // ARTICLE TEST FAULTS BEGIN
        let faults = FaultInjection(latency: .milliseconds(200), failFirst: 2)
        try await withReferenceServer(schema: .trains, configuration: .init(faults: faults)) { api in
            await #expect(throws: APIError.self) { try await Train.get(id: 1, in: api.store) }
        }
        // ARTICLE TEST FAULTS END
        try await withReferenceServer(schema: .trains, configuration: .init(faults: faults)) { api in
            for _ in 0..<2 {
                let error = await #expect(throws: APIError.self) { try await Train.get(id: 1, in: api.store) }
                #expect(error?.statusCode == 503)
            }
            let train = try await Train.get(id: 1, in: api.store)
            #expect(train.company == "MonoRail Co.")
        }

        // ARTICLE TEST SCRIPTED BEGIN
        try await withScriptedServer { server, store in
            server.respond(to: "GET /trains/1", status: 404, body: #"{"detail": "Train not found"}"#)
            let error = await #expect(throws: APIError.self) { try await Train.get(id: 1, in: store) }
            #expect(error?.statusCode == 404)
            #expect(server.requests == ["GET /trains/1"])
        }
        // ARTICLE TEST SCRIPTED END
    }
}

@Resource
final class Note {
    var title: String?
}
