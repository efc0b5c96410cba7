import Foundation
import MonoRail
import MonoRailServer
import Testing

/// The examples of the Concurrency and Testing-your-app articles, run here; a test checks each one
/// still reads as in its article.
@Suite("DocC article examples", .timeLimit(.minutes(2)))
struct ArticleExampleTests {
    static let articles = ["Concurrency", "TestingYourApp"]
    static let regions = [
        "CONCURRENT TASKS", "DELIVERY", "BLOCKING", "TEST STORE", "TEST SCHEMA", "TEST FAULTS",
    ]

    @Test("the examples match the articles")
    func matchArticles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var blocks: [[String]] = []
        for article in Self.articles {
            let url = root.appendingPathComponent("Sources/MonoRail/Documentation.docc/\(article).md")
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

    @Test("Testing your app: a server and a store per test, a schema of your own, faults")
    func testingYourApp() async throws {
        do {
            // ARTICLE TEST STORE BEGIN
            let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
            let store = ResourceStore(configuration: .init(apiRootURL: server.baseURL, retryPolicy: .none))

            let train = try await Train.get(id: 1, in: store)
            train.maxSpeed = 99
            try await train.save()

            #expect(server.journal.entries.last == "PUT /trains/1")
            #expect(try server.store.find("trains", id: "1")?["max_speed"] == 99)
            await server.stop()
            // ARTICLE TEST STORE END
        }

        do {
            // ARTICLE TEST SCHEMA BEGIN
            let schema = ServerSchema(
                resources: [
                    ResourceSchema(name: "post", fields: [FieldSchema(name: "title", type: .string, required: true)])
                ],
                seed: ["posts": [["title": "Hello"]]])
            let server = try await ReferenceServer(schema: schema, configuration: .init(port: 0)).start()
            // ARTICLE TEST SCHEMA END
            let store = ResourceStore(configuration: .init(apiRootURL: server.baseURL, retryPolicy: .none))
            #expect(try await ArticlePost.get(id: 1, in: store).title == "Hello")
            let untitled = ArticlePost()
            let refused = await #expect(throws: APIError.self) { try await untitled.create(in: store) }
            #expect(refused?.code == .validationFailed)
            #expect(untitled.errors["title"].isEmpty == false)
            await server.stop()
        }

        // ARTICLE TEST FAULTS BEGIN
        let faults = FaultInjection(latency: .milliseconds(200), failFirst: 2)
        let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0, faults: faults)).start()
        // ARTICLE TEST FAULTS END
        let faulty = ResourceStore(configuration: .init(apiRootURL: server.baseURL, retryPolicy: .none))
        for _ in 0..<2 {
            let error = await #expect(throws: APIError.self) { try await Train.get(id: 1, in: faulty) }
            #expect(error?.statusCode == 503)
        }
        #expect(try await Train.get(id: 1, in: faulty).company == "MonoRail Co.")
        await server.stop()
    }
}

@Resource(name: "post")
final class ArticlePost {
    var title: String?
}
