import Foundation
import MonoRailServer
import MonoRailTesting
import TestServer
import Testing

@testable import MonoRail

/// ApiModel's README, in MonoRail: its models as declared there.
enum ApiModelSeed {
    /// `class Post: Object, ApiModel` with `apiRoutes()` `index: "/posts.json", show: "/post/:id:.json"`.
    @Resource
    final class Post {
        var title: String?
        var contents: String?
        /// ApiModel's `NSDateTransform(dateFormat: "yyyy-MM-dd")`.
        @Field(transform: .date(format: "yyyy-MM-dd")) var publishedOn: Date?

        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.conventions.routes = ResourceRoutes(
                index: "/posts.json", show: "/post/:id:.json", create: "/posts.json", update: "/post/:id:.json",
                destroy: "/post/:id:.json")
        }
    }

    /// `Api.find { user in }`: the show of a singleton, `GET /user.json`.
    @Resource
    final class User {
        var email: String?

        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.conventions.routes = .singleton("/user.json")
        }
    }

    /// `class UserAvatar` with `primaryKey() -> "userId"`, `ApiRoutes.resource("/user/avatar.json")`
    /// and `multipart/form-data` encoding.
    @Resource(name: "user_avatar", primaryKey: "user_id")
    final class UserAvatar {
        var image: FileUpload?

        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.conventions.routes = .singleton("/user/avatar.json")
            configuration.format = .multipart
        }
    }

    /// A collection keyed by `member_id`, for the primary key in lists, the identity map and routes.
    @Resource(primaryKey: "member_id")
    final class Member {
        var name: String?
    }

    /// The same records, with the key given by overriding `primaryKey` as ApiModel's class function.
    @Resource(name: "member")
    final class MemberByOverride {
        var name: String?
        static var primaryKey: String { "member_id" }
    }

    /// ApiModel's named transforms, over a server that sends numbers as text, flags as words and
    /// some values not at all: each reads what it can and falls back for the rest.
    @Resource
    final class Stat {
        @Field(transform: .int) var views: Int = -1
        @Field(transform: .int) var likes: Int = -1
        @Field(transform: .double) var rating: Double = -1
        @Field(transform: .float) var ratio: Float = -1
        @Field(transform: .bool) var featured: Bool = false
        @Field(transform: .bool) var archived: Bool = true
        @Field(transform: .string) var code: String = "unset"
        @Field(transform: .string) var note: String = "unset"
        @Field(transform: .date) var createdAt: Date?
        @Field(transform: .percentage) var share: Double?
    }

    /// A transform written by the app, as ApiModel's README invites: prices travel as cents.
    struct CentsTransform: FieldTransform {
        func decode(_ value: JSONValue) throws -> Decimal {
            guard let cents = value.intValue else { throw FieldTransformError("expected cents, found \(value)") }
            return Decimal(cents) / 100
        }

        func encode(_ value: Decimal) throws -> JSONValue {
            .int(Int64(truncating: (value * 100) as NSDecimalNumber))
        }
    }

    @Resource
    final class Ticket {
        @Field(transform: CentsTransform()) var price: Decimal = 0
    }

    /// ApiModel's `ModelTransform()` and `ArrayTransform()`, over nested values that are no records.
    struct Address: Codable, Sendable, Equatable {
        var street: String
        var postalCode: String
    }

    struct Tag: Codable, Sendable, Equatable {
        var name: String
        var weight: Int
    }

    @Resource
    final class Profile {
        @Field(transform: .model(Address.self)) var address: Address?
        @Field(transform: .array(of: Tag.self)) var tags: [Tag] = []
    }

    /// The server these talk to: ApiModel's 400 errors, singular show paths, `.json` suffixes.
    static let schema = ServerSchema(
        resources: [
            ResourceSchema(
                name: "post",
                fields: [
                    FieldSchema(name: "title", type: .string, required: true),
                    FieldSchema(name: "contents", type: .string, minLength: 6),
                    FieldSchema(name: "published_on", type: .string),
                ]),
            ResourceSchema(name: "user", fields: [FieldSchema(name: "email", type: .string)], singleton: true),
            ResourceSchema(
                name: "user_avatar", fields: [FieldSchema(name: "image", type: .file)], primaryKey: "user_id",
                singleton: true, path: "user/avatar"),
            ResourceSchema(name: "member", fields: [FieldSchema(name: "name", type: .string)], primaryKey: "member_id"),
            ResourceSchema(name: "ticket", fields: [FieldSchema(name: "price", type: .integer)]),
            ResourceSchema(
                name: "profile",
                fields: [FieldSchema(name: "address", type: .json), FieldSchema(name: "tags", type: .json)]),
            ResourceSchema(
                name: "stat",
                fields: ["views", "likes", "rating", "ratio", "featured", "archived", "code", "note", "share"].map {
                    FieldSchema(name: $0, type: .json)
                }),
        ],
        seed: [
            "posts": [["title": "Hello", "contents": "First post"]],
            "users": [["email": "ada@example.com"]],
            "members": [["name": "Ada"], ["name": "Grace"]],
            "tickets": [["price": 1250]],
            "profiles": [
                [
                    "address": ["street": "Drottninggatan 1", "postal_code": "111 51"],
                    "tags": [["name": "rails", "weight": 3]],
                ],
                ["address": nil, "tags": "none"],
                ["address": "Drottninggatan 1", "tags": [["name": "rails"]]],
            ],
            "stats": [
                [
                    "views": "42", "likes": "n/a", "rating": "4.5", "ratio": 0.25, "featured": "yes",
                    "archived": ["no"], "code": 7, "note": nil, "share": "12.5%",
                ]
            ],
        ])
}

@Suite("ApiModel's README, against the reference server in its conventions", .timeLimit(.minutes(5)))
struct ApiModelSeedTests {
    func withApiModelServer(
        configure: (inout MonoRail.Configuration) -> Void = { _ in }, _ body: (TestAPI) async throws -> Void
    ) async throws {
        try await withHarness(
            schema: ApiModelSeed.schema, server: .init(envelope: .apiModel), configure: configure, body)
    }

    @Test("basic REST verbs: Api.get(path) { response in … } reads status, body and errors without throwing")
    func basicVerbs() async throws {
        try await withApiModelServer { harness in
            let client = harness.store.client
            let list = try await client.send(
                APIRequest(method: .get, path: "/posts.json", options: .init(validatesStatus: false)))
            #expect(list.isSuccessful)
            #expect(try list.decode([String: [JSONValue]].self)["posts"]?.count == 1)
            let refused = try await client.send(
                APIRequest(
                    method: .post, path: "/posts.json", body: .json(["post": ["contents": "short"]] as JSONValue),
                    options: .init(validatesStatus: false)))
            #expect(!refused.isSuccessful)
            #expect(refused.response.status.code == 400)
            #expect(refused.errors["title"] == ["can't be blank"])
            #expect(refused.errors["contents"] == ["is too short (minimum is 6 characters)"])
        }
    }

    @Test("fetching objects: Api.findArray at /posts.json, the show at /post/:id:.json, Api.find of /user.json")
    func fetching() async throws {
        try await withApiModelServer { harness in
            let posts = try await ApiModelSeed.Post.get(in: harness.store)
            #expect(posts.map(\.title) == ["Hello"])
            let post = try await ApiModelSeed.Post.get(id: 1, in: harness.store)
            #expect(post === posts[0])
            #expect(harness.journal.entries.suffix(2) == ["GET /posts.json", "GET /post/1.json"])

            let user = try await ApiModelSeed.User.current(in: harness.store)
            #expect(user.email == "ada@example.com")
            #expect(try await ApiModelSeed.User.current(in: harness.store) === user)
            #expect(harness.journal.entries.last == "GET /user.json")
        }
    }

    @Test("storing objects: POST /posts.json, the id the server gave, then form errors at 400 on the model")
    func storing() async throws {
        try await withApiModelServer { harness in
            let post = ApiModelSeed.Post()
            post.title = "Hello world - A prologue"
            post.contents = "Hello!"
            post.publishedOn = Date(timeIntervalSince1970: 1_425_816_000)  // 2015-03-08 12:00 UTC
            try await post.create(in: harness.store)  // `save()` of a new record, in a store of its own
            #expect(!post.hasErrors)
            let id = try #require(post.id)
            #expect(harness.journal.entries.last == "POST /posts.json")
            let stored = try #require(try harness.server.store.find("posts", id: id.description))
            #expect(stored["title"] == "Hello world - A prologue")
            #expect(stored["published_on"] == "2015-03-08")

            post.contents = "Hi"
            await #expect(throws: APIError.self) { try await post.save() }
            #expect(harness.journal.entries.last == "PUT /post/\(id).json")
            #expect(post.hasErrors)
            #expect(post.errors["contents"] == ["is too short (minimum is 6 characters)"])
            #expect(post.errorMessages == ["Contents is too short (minimum is 6 characters)"])
        }
    }

    @Test("a singleton saves and deletes at its route; the next read creates nothing")
    func singletonWrites() async throws {
        try await withApiModelServer { harness in
            let user = try await ApiModelSeed.User.current(in: harness.store)
            user.email = "grace@example.com"
            try await user.save()
            #expect(harness.journal.entries.last == "PUT /user.json")
            #expect(try harness.server.store.list(ApiModelSeed.schema.resources[1], filters: [:]).records.count == 1)
            try await user.delete()
            #expect(harness.journal.entries.last == "DELETE /user.json")
            #expect(user.isDeleted)
            let error = await #expect(throws: APIError.self) { try await ApiModelSeed.User.current(in: harness.store) }
            #expect(error?.response?.status == .notFound)
        }
    }

    @Test("a model whose show route needs an id cannot be read as a singleton, and says why")
    func notASingleton() async throws {
        try await withApiModelServer { harness in
            let error = await #expect(throws: APIError.self) { try await ApiModelSeed.Post.current(in: harness.store) }
            #expect(error?.code == .invalidRequest)
            #expect(error?.message.contains(".singleton(") == true)
            #expect(harness.journal.count == 0)
        }
    }

    @Test("file uploads: UserAvatar under primaryKey user_id, multipart to /user/avatar.json, then updated in place")
    func userAvatar() async throws {
        try await withApiModelServer { harness in
            let image = Data((0..<5000).map { UInt8($0 % 251) })
            let avatar = ApiModelSeed.UserAvatar()
            avatar.image = FileUpload(fileName: "avatar.jpg", mimeType: "image/jpg", data: image)
            try await avatar.create(in: harness.store)
            #expect(!avatar.hasErrors)
            #expect(harness.journal.requests.last?.line == "POST /user/avatar.json")
            #expect(harness.journal.requests.last?.contentType?.hasPrefix("multipart/form-data") == true)
            #expect(avatar.id == 1)  // read from user_id
            let url = try #require(avatar.image?.remoteURL)
            #expect(url.path.hasPrefix("/uploads/"))

            avatar.image = FileUpload(fileName: "avatar2.jpg", mimeType: "image/jpg", data: image + image)
            try await avatar.save()
            #expect(harness.journal.entries.last == "PUT /user/avatar.json")
            #expect(avatar.image?.size == Int64(image.count * 2))
        }
    }

    @Test(
        "a primary key other than id: lists, the identity map, routes and MessagePack all use it",
        arguments: [WireFormat.json, .messagePack])
    func primaryKey(format: WireFormat) async throws {
        let useFormat: (inout MonoRail.Configuration) -> Void = { $0.format = format }
        try await withApiModelServer(configure: useFormat) { harness in
            let members = try await ApiModelSeed.Member.get(in: harness.store)
            #expect(members.map(\.id) == [1, 2])
            let grace = try await ApiModelSeed.Member.get(id: 2, in: harness.store)
            #expect(grace === members[1])
            grace.name = "Grace Hopper"
            try await grace.save()
            #expect(harness.journal.entries.last == "PUT /members/2")
            #expect(try harness.server.store.find("members", id: "2")?["name"] == "Grace Hopper")
            let overridden = try await ApiModelSeed.MemberByOverride.get(id: 1, in: harness.store)
            #expect(overridden.id == 1)
            #expect(overridden.name == "Ada")
        }
    }

    @Test("a record without its primary key is a decoding failure that names the key")
    func missingPrimaryKey() async throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let error = #expect(throws: APIError.self) {
            try ApiModelSeed.Member.merge(recordBody: Data(#"{"member": {"id": 1, "name": "Ada"}}"#.utf8), in: store)
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.key == "member_id")
    }

    @Test("a singleton answered without an id is one instance, read, saved and fetched at its route")
    func singletonWithoutID() async throws {
        // The reference server always writes an id; many servers leave it out of a singleton.
        try await withCanned { server, store in
            server.respond(to: "GET /user.json", body: #"{"user": {"email": "ada@example.com"}}"#)
            server.respond(to: "PUT /user.json", body: #"{"user": {"email": "grace@example.com"}}"#)
            let user = try await ApiModelSeed.User.current(in: store)
            #expect(user.id == nil)
            #expect(try await ApiModelSeed.User.current(in: store) === user)
            user.email = "grace@example.com"
            try await user.save()
            #expect(server.requests.last?.hasPrefix("PUT /user.json") == true)
            #expect(!user.hasChanges)
            try await user.fetch()
            #expect(server.requests.last == "GET /user.json")
            #expect(user.email == "ada@example.com")
            #expect(try await ApiModelSeed.User.current(in: store) === user)
        }
    }

    @Test(
        "transforms: Int, Double, Float, Bool, String read what they can and fall back to 0, false, \"\"; Date and Percentage"
    )
    func namedTransforms() async throws {
        try await withApiModelServer { harness in
            let stat = try await ApiModelSeed.Stat.get(id: 1, in: harness.store)
            #expect(stat.views == 42)
            #expect(stat.likes == 0)
            #expect(stat.rating == 4.5)
            #expect(stat.ratio == 0.25)
            #expect(stat.featured)
            #expect(!stat.archived)
            #expect(stat.code == "7")
            #expect(stat.note == "")
            #expect(stat.share == 0.125)
            // The server's own timestamp, in ISO 8601 with fractional seconds.
            #expect(stat.createdAt.map { abs($0.timeIntervalSinceNow) < 600 } == true)
            // Written back in their own type.
            stat.views = 43
            try await stat.save()
            #expect(try harness.server.store.find("stats", id: "1")?["views"] == 43)
        }
        // Out of range, not finite, or of another shape: the fallback, never a trap.
        #expect(try IntTransform().decode(.double(1e300)) == 0)
        #expect(try IntTransform().decode(.uint(.max)) == 0)
        #expect(try IntTransform().decode(" 12 ") == 12)
        #expect(try IntTransform().decode("-3.9") == -3)
        #expect(try FloatTransform().decode(.double(1e300)) == 0)
        #expect(try DoubleTransform().decode("nan") == 0)
        #expect(try BoolTransform().decode(.double(.nan)) == false)
        #expect(throws: FieldTransformError.self) { try DoubleTransform().encode(.infinity) }
    }

    @Test(
        "ModelTransform and ArrayTransform: nested values read and written; no list is an empty one; a wrong shape names the field"
    )
    func nestedTransforms() async throws {
        try await withApiModelServer { harness in
            let profile = try await ApiModelSeed.Profile.get(id: 1, in: harness.store)
            #expect(profile.address == ApiModelSeed.Address(street: "Drottninggatan 1", postalCode: "111 51"))
            #expect(profile.tags == [ApiModelSeed.Tag(name: "rails", weight: 3)])
            // Written back as the server sent them, keys and all.
            profile.tags.append(ApiModelSeed.Tag(name: "swift", weight: 5))
            try await profile.save()
            #expect(
                try harness.server.store.find("profiles", id: "1")?["tags"]
                    == [["name": "rails", "weight": 3], ["name": "swift", "weight": 5]])
            #expect(
                try harness.server.store.find("profiles", id: "1")?["address"]
                    == ["street": "Drottninggatan 1", "postal_code": "111 51"])

            // No address is nil; a list that is no list is ApiModel's fallback, an empty one.
            let bare = try await ApiModelSeed.Profile.get(id: 2, in: harness.store)
            #expect(bare.address == nil)
            #expect(bare.tags.isEmpty)

            // A nested value of the wrong shape is said, naming the field, never a quiet default.
            let error = await #expect(throws: APIError.self) {
                try await ApiModelSeed.Profile.get(id: 3, in: harness.store)
            }
            #expect(error?.code == .decodingFailed)
            #expect(error?.message.contains("address") == true)
        }
    }

    @Test("URLs: post.apiUrlForRoute(Post.apiRoutes().show) is post.apiURL(for: \\.show)")
    func routeURL() async throws {
        try await withApiModelServer { harness in
            let post = try await ApiModelSeed.Post.get(id: 1, in: harness.store)
            let url = try post.apiURL(for: \.show)
            #expect(url.absoluteString == harness.server.baseURL.absoluteString + "/post/1.json")
            #expect(
                try post.apiURL(for: \.index).absoluteString == harness.server.baseURL.absoluteString + "/posts.json")
            // The URL is the record's: the server answers it.
            let response = try await harness.store.client.send(
                APIRequest(method: .get, path: APIPath(verbatim: url.absoluteString)))
            #expect(response.response.status == .ok)
            let draft = ApiModelSeed.Post()
            let error = #expect(throws: APIError.self) { try draft.apiURL(for: \.show) }
            #expect(error?.code == .invalidRequest)
        }
    }

    @Test("a transform the app writes reads and writes its field; what it refuses names the field")
    func ownTransform() async throws {
        try await withApiModelServer { harness in
            let ticket = try await ApiModelSeed.Ticket.get(id: 1, in: harness.store)
            #expect(ticket.price == Decimal(string: "12.5"))
            ticket.price = Decimal(string: "9.99") ?? 0
            try await ticket.save()
            #expect(try harness.server.store.find("tickets", id: "1")?["price"] == 999)
            let refused = #expect(throws: APIError.self) {
                _ = try ApiModelSeed.Ticket.merge(json: ["id": 2, "price": "free"], in: harness.store)
            }
            #expect(refused?.code == .decodingFailed)
            #expect(refused?.message.contains("expected cents") == true)
            #expect(refused?.decodingFailure?.path == "$.price")
        }
    }

    @Test("a create answered with only {\"post\": {\"id\": 1}} takes the id and keeps what was sent")
    func createAnsweredWithID() async throws {
        try await withCanned { server, store in
            server.respond(to: "POST /posts.json", body: #"{"post": {"id": 1}}"#)
            let post = ApiModelSeed.Post()
            post.title = "Hello world - A prologue"
            post.contents = "Hello!"
            try await post.create(in: store)
            #expect(post.id == 1)
            #expect(post.title == "Hello world - A prologue")
            #expect(post.contents == "Hello!")
            #expect(!post.hasChanges)
            #expect(store.instance(of: ApiModelSeed.Post.self, id: 1) === post)
        }
    }
}
