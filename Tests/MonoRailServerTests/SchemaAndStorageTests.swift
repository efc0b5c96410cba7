import AsyncHTTPClient
import Foundation
import MonoRail
import MonoRailAsyncHTTPClient
import MonoRailServer
import MonoRailTesting
import NIOCore
import TestServer
import Testing

@Suite("Reference server: schema files and storage", .timeLimit(.minutes(5)))
struct SchemaAndStorageTests {
    let files = TemporaryDirectory()

    func temporaryFile(_ name: String, _ contents: String? = nil) throws -> URL {
        let url = files.path(name)
        if let contents { try Data(contents.utf8).write(to: url) }
        return url
    }

    @Test("a schema file describes resources, validations, relationships and seed data")
    func schemaFile() async throws {
        let file = try temporaryFile(
            "schema.json",
            #"""
            {"id_type": "string",
             "resources": [
               {"name": "person", "plural": "people",
                "fields": [{"name": "name", "type": "string", "required": true, "min_length": 2},
                           {"name": "age", "type": "integer", "min": 0}],
                "relationships": [{"kind": "has_many", "name": "posts"}], "embeds": ["posts"]},
               {"name": "post", "fields": [{"name": "title", "type": "string"}, {"name": "meta", "type": "json"}],
                "relationships": [{"kind": "belongs_to", "name": "person", "foreign_key": "person_id"}]}
             ],
             "seed": {"people": [{"name": "Ada", "age": 36}]}}
            """#)
        let schema = try ServerSchema.load(from: file)
        #expect(schema.resource(plural: "people")?.name == "person")
        try await withServer(schema: schema) { _, client in
            struct Person: Codable, Sendable {
                var id: String
                var name: String
                var posts: [JSONValue]?
            }
            let people: [Person] = try await client.get("/people", root: "people")
            let ada = try #require(people.first)
            #expect(ada.name == "Ada")
            #expect(ada.id.count == 10, "string ids")
            let post: JSONValue = try await client.post(
                "/posts", body: ["title": "Hi", "person_id": .string(ada.id), "meta": ["a": [1, 2]]] as JSONValue,
                root: "post")
            #expect(post["meta"] == ["a": [1, 2]])
            let shown: Person = try await client.get("/people/\(ada.id)", root: "person")
            #expect(shown.posts?.count == 1)
            let error = await #expect(throws: APIError.self) {
                try await client.post(
                    "/people", body: ["name": "A", "age": -1] as JSONValue, root: "person", as: Person.self)
            }
            #expect(error?.errors["name"] == ["is too short (minimum is 2 characters)"])
            #expect(error?.errors["age"] == ["must be greater than or equal to 0"])
        }
    }

    @Test("primary keys, singletons and polymorphic relationships are read from a schema file")
    func schemaFileKeys() async throws {
        let file = try temporaryFile(
            "keys.json",
            #"""
            {"resources": [
               {"name": "user_avatar", "fields": [{"name": "url", "type": "string"}], "primary_key": "user_id",
                "singleton": true, "path": "user/avatar"},
               {"name": "train", "fields": [{"name": "company", "type": "string"}]},
               {"name": "comment", "fields": [],
                "relationships": [{"kind": "belongs_to", "name": "subject", "polymorphic": true}]}
             ],
             "seed": {"trains": [{"company": "MonoRail Co."}]}}
            """#)
        let schema = try ServerSchema.load(from: file)
        #expect(schema.resources[0].primaryKey == "user_id" && schema.resources[0].singleton == true)
        try await withServer(schema: schema) { _, client in
            let avatar: JSONValue = try await client.put(
                "/user/avatar.json", body: ["url": "/a.png"] as JSONValue, root: "user_avatar")
            #expect(avatar["user_id"] == 1 && avatar["id"] == nil)
            let comment: JSONValue = try await client.post(
                "/comments", body: ["subject_type": "Train", "subject_id": 1] as JSONValue, root: "comment")
            #expect(comment["subject_type"] == "Train")
            let shown: JSONValue = try await client.get("/comments/1", parameters: ["include": "subject"])
            #expect(shown["trains"]?[0]?["company"] == "MonoRail Co.")
        }
    }

    @Test(
        "invalid schema files are refused with a clear error",
        arguments: [
            "{not json",
            #"{"resources": [{"name": "Train", "fields": []}]}"#,
            #"{"resources": [{"name": "train", "fields": [{"name": "x; DROP TABLE", "type": "string"}]}]}"#,
            #"{"resources": [{"name": "train", "fields": [{"name": "a", "type": "money"}]}]}"#,
            #"{"resources": [{"name": "train", "fields": [{"name": "a", "type": "string"}, {"name": "a", "type": "string"}]}]}"#,
            #"{"resources": [{"name": "car", "fields": [], "relationships": [{"kind": "belongs_to", "name": "ghost"}]}]}"#,
            #"{"resources": [{"name": "user", "fields": [], "primary_key": "user id"}]}"#,
            #"{"resources": [{"name": "user", "fields": [], "singleton": true, "path": "user/../x"}]}"#,
            #"{"resources": [{"name": "c", "fields": [{"name": "s_type", "type": "string"}], "relationships": [{"kind": "belongs_to", "name": "s", "polymorphic": true}]}]}"#,
        ])
    func invalidSchemas(contents: String) throws {
        let file = try temporaryFile("bad.json", contents)
        #expect(throws: SchemaError.self) { try ServerSchema.load(from: file) }
    }

    @Test("acknowledged writes survive a restart on the same database file")
    func persistence() async throws {
        let database = try temporaryFile("db.sqlite")
        var createdID = 0
        try await withServer(configuration: .init(databasePath: database.path)) { _, client in
            let train: JSONValue = try await client.post(
                "/trains", body: ["company": "Durable"] as JSONValue, root: "train")
            createdID = try #require(train["id"]?.intValue)
        }
        try await withServer(configuration: .init(databasePath: database.path)) { _, client in
            let train: JSONValue = try await client.get("/trains/\(createdID)", root: "train")
            #expect(train["company"] == "Durable")
            let all: [JSONValue] = try await client.get("/trains", root: "trains")
            #expect(all.count == 3, "seeded once, not again on restart")
        }
    }

    @Test("200 concurrent mixed reads and writes: every acknowledged write is there afterwards")
    func hammer() async throws {
        let database = try temporaryFile("hammer.sqlite")
        // A client of its own: 200 requests at once queue for the shared client's few connections, and
        // on a busy machine some waited past its 10 s connect timeout, which is what AsyncHTTPClient
        // also allows for a place in the pool. Waiting is not what this test is about.
        var pooled = HTTPClient.Configuration()
        pooled.timeout.connect = .seconds(120)
        pooled.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: AsyncHTTPClientTransport.guardingResponses(pooled))
        do {
            try await hammer(database, through: http)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    private func hammer(_ database: URL, through http: HTTPClient) async throws {
        try await withServer(configuration: .init(databasePath: database.path)) { running, _ in
            let client = APIClient(
                configuration: .init(
                    baseURL: running.baseURL, transport: AsyncHTTPClientTransport(client: http), retryPolicy: .none))
            let created = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        switch index % 4 {
                        case 0, 1:
                            let train: JSONValue = try await client.post(
                                "/trains",
                                body: ["company": .string("T\(index)"), "number_of_cars": .int(Int64(index))]
                                    as JSONValue,
                                root: "train")
                            return train["id"]?.intValue
                        case 2:
                            let _: [JSONValue] = try await client.get(
                                "/trains", parameters: ["number_of_cars": .int(Int64(index))], root: "trains",
                                options: RequestOptions(deduplicates: false))
                            return nil
                        default:
                            let _: JSONValue = try await client.patch(
                                "/trains/1", body: ["number_of_cars": .int(Int64(index))] as JSONValue, root: "train")
                            return nil
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { ids, id in if let id { ids.append(id) } }
            }
            #expect(created.count == 100)
            #expect(Set(created).count == 100)
            let all: [JSONValue] = try await client.get("/trains", root: "trains")
            let stored = Set(all.compactMap { $0["id"]?.intValue })
            #expect(Set(created).isSubset(of: stored))
        }
    }
}
