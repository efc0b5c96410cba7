import Foundation
import MonoRailServer
import MonoRailTesting
import Testing

@testable import MonoRail

/// Apic's README, in MonoRail: `Gist` and `User` as declared there.
enum ApicSeed {
    @Resource
    final class User {
        var login: String = ""
        var status: Status = .online

        /// Apic's `IntInitializable` enum: made from its code by `assign(undefinedValue:forProperty:)`
        /// alone, since it cannot decode itself; it encodes as its code.
        enum Status: Codable, Sendable {
            case online, away, busy

            init?(code: Int) {
                switch code {
                case 0: self = .online
                case 1: self = .away
                case 2: self = .busy
                default: return nil
                }
            }

            init(from decoder: any Decoder) throws {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "a Status is made by the model's hook"))
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .online: try container.encode(0)
                case .away: try container.encode(1)
                case .busy: try container.encode(2)
                }
            }
        }

        static func assign(undefinedValue value: JSONValue, forProperty property: String) throws -> (any Sendable)? {
            guard property == "status", let code = value.intValue else { return nil }
            return Status(code: code)
        }
    }

    @Resource
    final class Gist {
        var url: URL?
        /// Apic's `dateFormats` with `"y/MM/dd HH:mm:ss Z"` added. (`posted_at`: the reference
        /// server keeps `created_at` itself.)
        @Field(key: "posted_at", transform: .date(format: "y/MM/dd HH:mm:ss Z")) var createdAt: Date?
        var comments: Int = 0
        @References(.embedsOne) var user: User?

        /// `shouldFail(withInvalidValue:forProperty:)`: only these must be valid.
        static func shouldFail(withInvalidValue value: JSONValue?, forProperty property: String) -> Bool {
            ["url", "createdAt"].contains(property)
        }
    }

    /// Apic's `dateFormats` for one model: its own list, the store's for the others.
    @Resource(name: "gist")
    final class GistByFormats {
        var postedAt: Date?
        var comments: Int = 0

        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.coding.dateFormats = [.custom("y/MM/dd HH:mm:ss Z")] + configuration.coding.dateFormats
            configuration.coding.dateEncodingFormat = .custom("y/MM/dd HH:mm:ss Z")
        }
    }

    /// The same date with the store's formats.
    @Resource(name: "gist")
    final class Dated {
        var postedAt: Date?
    }

    static let schema = ServerSchema(
        resources: [
            ResourceSchema(
                name: "user",
                fields: [FieldSchema(name: "login", type: .string), FieldSchema(name: "status", type: .integer)]),
            ResourceSchema(
                name: "gist",
                fields: [
                    FieldSchema(name: "url", type: .string), FieldSchema(name: "posted_at", type: .string),
                    FieldSchema(name: "comments", type: .integer),
                ],
                relationships: [RelationshipSchema(kind: .belongsTo, name: "user")], embeds: ["user"]),
        ],
        seed: [
            "users": [["login": "octocat", "status": 1]],
            "gists": [
                [
                    "url": "https://api.github.com/gists/1", "posted_at": "2015/03/08 14:19:31 +0000",
                    "comments": 2, "user_id": 1,
                ]
            ],
        ])
}

@Suite("Apic's README: init(dictionary:), policies and type resolution", .timeLimit(.minutes(5)))
struct ApicSeedTests {
    @Test("init(dictionary:) reads a record with the response's rules and stays out of the store")
    func initDictionary() throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let gist = try ApicSeed.Gist(
            dictionary: [
                "id": "aa5a315d", "url": "https://api.github.com/gists/aa5a315d",
                "posted_at": "2010/04/14 02:15:15 +0000", "comments": "not a number",
                "user": ["id": 7, "login": "octocat", "status": 2],
            ], using: store)
        #expect(gist.id == "aa5a315d")
        #expect(gist.url == URL(string: "https://api.github.com/gists/aa5a315d"))
        #expect(gist.createdAt == Date(timeIntervalSince1970: 1_271_211_315))
        #expect(gist.comments == 0)  // invalid, and shouldFail lets it go
        #expect(gist.user?.login == "octocat")
        #expect(gist.user?.status == .busy)  // assign(undefinedValue:)
        #expect(!gist.hasChanges)
        #expect(store.count == 0)
        #expect(store.instance(of: ApicSeed.Gist.self, id: "aa5a315d") == nil)
    }

    @Test("init(json:) fails as a response would, naming the field and path")
    func initJSONFailure() throws {
        let error = #expect(throws: APIError.self) {
            try ApicSeed.Gist(json: ["url": "https://example.com", "posted_at": "yesterday"])
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.path == "$.posted_at")
        let unsupported = #expect(throws: APIError.self) {
            try ApicSeed.Gist(dictionary: ["url": "https://example.com", "when": Locale(identifier: "en")])
        }
        #expect(unsupported?.code == .encodingFailed)
        #expect(unsupported?.message.contains("$.when") == true)
    }

    @Test("Foundation values convert by their type: JSONSerialization's numbers and Booleans, dates, nesting")
    func foundationValues() throws {
        let parsed = try JSONSerialization.jsonObject(
            with: Data(#"{"a": 1, "b": true, "c": 1.5, "d": [0, false]}"#.utf8))
        #expect(
            try JSONValue(foundation: parsed)
                == ["a": 1, "b": true, "c": 1.5, "d": [0, false]])
        #expect(
            try JSONValue(foundation: ["n": NSNull(), "u": URL(string: "https://x.y/z")!]) == [
                "n": nil, "u": "https://x.y/z",
            ])
        #expect(try JSONValue(foundation: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(throws: APIError.self) { try JSONValue(foundation: Double.nan) }
    }

    @Test("a record made from a dictionary saves to the server; merge(json:) enters the store when asked")
    func againstTheServer() async throws {
        try await withHarness(schema: ApicSeed.schema) { harness in
            let user = try ApicSeed.User(dictionary: ["login": "hubot", "status": 0], using: harness.store)
            #expect(user.id == nil)
            try await user.save()
            let id = try #require(user.id)
            #expect(try harness.server.store.find("users", id: id.description)?["login"] == "hubot")
            #expect(try harness.server.store.find("users", id: id.description)?["status"] == 0)
            #expect(try await ApicSeed.User.get(id: id, in: harness.store) === user)

            let gist = try await ApicSeed.Gist.get(id: 1, in: harness.store)
            #expect(gist.user?.login == "octocat")
            #expect(gist.user?.status == .away)
            #expect(gist.createdAt == Date(timeIntervalSince1970: 1_425_824_371))

            // A push payload, say: merged into the live instances, not beside them.
            let payload: JSONValue = [
                "id": 1, "url": "https://api.github.com/gists/1", "posted_at": "2015/03/08 14:19:31 +0000",
                "comments": 3,
            ]
            let pushed = try ApicSeed.Gist.merge(json: payload, in: harness.store)
            #expect(pushed === gist)
            #expect(gist.comments == 3)
            // The policy holds here too: url and createdAt must be valid.
            #expect(throws: APIError.self) {
                try ApicSeed.Gist.merge(json: ["id": 1, "comments": 4], in: harness.store)
            }
            #expect(gist.comments == 3)
            let detached = try ApicSeed.Gist(
                json: [
                    "id": 1, "url": "https://example.com/draft", "posted_at": "2015/03/08 14:19:31 +0000",
                    "comments": 9,
                ],
                using: harness.store)
            #expect(detached !== gist)
            #expect(detached.comments == 9)
            #expect(gist.comments == 3)
        }
    }

    @Test(
        "dateFormats for one model: its dates read and written in its formats; other models keep the store's")
    func modelDateFormats() async throws {
        try await withHarness(schema: ApicSeed.schema) { harness in
            let gist = try await ApicSeed.GistByFormats.get(id: 1, in: harness.store)
            #expect(gist.postedAt == Date(timeIntervalSince1970: 1_425_824_371))
            gist.postedAt = Date(timeIntervalSince1970: 1_425_824_372)
            try await gist.save()
            #expect(try harness.server.store.find("gists", id: "1")?["posted_at"] == "2015/03/08 14:19:32 +0000")
            // The store's formats are unchanged for a model that sets none.
            let refused = #expect(throws: APIError.self) {
                _ = try ApicSeed.Dated.merge(
                    json: ["id": 1, "posted_at": "2015/03/08 14:19:31 +0000"], in: harness.store)
            }
            #expect(refused?.code == .decodingFailed)
        }
    }
}
