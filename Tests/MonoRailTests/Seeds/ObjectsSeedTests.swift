import Foundation
import MonoRailServer
import MonoRailTesting
import Testing

@testable import MonoRail

/// Objects' README, in MonoRail: the `Activity` and `User` of its `ClassesType` example.
enum ObjectsSeed {
    @Resource
    final class User {
        var name: String?
        /// The seed's `imageURL`, whose file `file(name: "image", url:)` keeps.
        var imageURL: String?
        /// A dependency list: `"activities": [ids]` both ways.
        @References(.many) var activities: [Activity]
    }

    @Resource(plural: "activities")
    final class Activity {
        var title: String?
        var distance: Double?
        @References var user: User?
    }

    /// Side-loaded with an activity, though `Activity` declares no relationship to it: merged
    /// because it is registered, as Objects' `ClassesType.from(plural:)` resolves any plural.
    @Resource
    final class Comment {
        var body: String?
    }

    /// The signed-in user: the header fields sent with every request.
    struct SignedIn: UserType {
        var cookie: [String: String] { ["Authorization": "Bearer objects-secret"] }
    }

    static let schema = ServerSchema(
        resources: [
            ResourceSchema(
                name: "user",
                fields: [
                    FieldSchema(name: "name", type: .string, required: true),
                    FieldSchema(name: "image_url", type: .string),
                ],
                relationships: [RelationshipSchema(kind: .hasMany, name: "activities", resource: "activity")]),
            ResourceSchema(
                name: "activity", plural: "activities",
                fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "distance", type: .float)],
                relationships: [
                    RelationshipSchema(kind: .belongsTo, name: "user"),
                    RelationshipSchema(kind: .hasMany, name: "comments"),
                ]),
            ResourceSchema(
                name: "comment", fields: [FieldSchema(name: "body", type: .string)],
                relationships: [RelationshipSchema(kind: .belongsTo, name: "activity")]),
        ],
        seed: [
            "users": [["name": "Ada"], ["name": "Grace"]],
            "activities": [
                ["title": "Morning climb", "distance": 12.5, "user_id": 1],
                ["title": "Evening run", "distance": 5.0, "user_id": 1],
            ],
            "comments": [["body": "Nice pace", "activity_id": 1]],
        ])
}

@Suite("Objects' README, over MessagePack, against the reference server speaking Objects", .timeLimit(.minutes(5)))
struct ObjectsSeedTests {
    let files = TemporaryDirectory()

    /// - Parameters:
    ///   - destroy: The delete route, when not the preset's.
    ///   - session: Who is signed in; default always ``ObjectsSeed/SignedIn``.
    ///   - fileCache: The store's file cache; default none.
    func withObjectsServer(
        destroy: RouteTemplate? = nil, session: Session? = nil, fileCache: FileCache? = nil,
        _ body: (TestAPI) async throws -> Void
    ) async throws {
        try await withHarness(
            schema: ObjectsSeed.schema, server: .init(envelope: .objects, bearerToken: "objects-secret"),
            configure: { configuration in
                configuration.conventions = .objects
                configuration.fileCache = fileCache
                if let destroy { configuration.conventions.routes.destroy = destroy }
                configuration.models.register(
                    ObjectsSeed.User.self, ObjectsSeed.Activity.self, ObjectsSeed.Comment.self)
                configuration.middleware.append(.currentUser { session.map { $0.user } ?? ObjectsSeed.SignedIn() })
            }, body)
    }

    @Test("pull: GET /activity/1 in MessagePack, the object and every dependency merged, registered or related")
    func pull() async throws {
        try await withObjectsServer { harness in
            // A comment the app holds; the server changes it; the pull below brings the change.
            let comment = try await ObjectsSeed.Comment.get(id: 1, in: harness.store)
            let comments = try #require(ObjectsSeed.schema.resources.last)
            _ = try harness.server.store.update(comments, id: "1", attributes: ["body": "Nice pace!"])
            let activity = try await ObjectsSeed.Activity.get(id: 1, in: harness.store)
            #expect(activity.title == "Morning climb")
            let request = try #require(harness.journal.requests.last)
            #expect(request.line == "GET /activity/1")
            #expect(request.accept?.hasPrefix("application/x-msgpack") == true)
            // The dependencies came beside it: its user, and a comment no relationship names.
            #expect(activity.user?.name == "Ada")
            #expect(comment.body == "Nice pace!")
            // The user's dependency list resolves from the identity map once its activities are live.
            let user = try #require(activity.user)
            #expect(user.activities.map(\.id) == [1])
            let all = try await ObjectsSeed.Activity.get(in: harness.store)
            #expect(user.activities.map(\.title) == ["Morning climb", "Evening run"])
            #expect(user.activities[1] === all[1])
        }
    }

    @Test("push: POST /activity/ creates without an id and updates with one in the body, MessagePack both ways")
    func push() async throws {
        try await withObjectsServer { harness in
            let user = try await ObjectsSeed.User.get(id: 2, in: harness.store)
            let activity = ObjectsSeed.Activity()
            activity.title = "Lunch ride"
            activity.user = user
            try await activity.create(in: harness.store)
            let id = try #require(activity.id)
            let created = try #require(harness.journal.requests.last)
            #expect(created.line == "POST /activity/")
            #expect(created.contentType == "application/x-msgpack")
            #expect(try harness.server.store.find("activities", id: id.description)?["user_id"] == 2)

            activity.distance = 31.4
            try await activity.save()
            #expect(harness.journal.entries.last == "POST /activity/")
            #expect(!activity.hasChanges)
            let stored = try #require(try harness.server.store.find("activities", id: id.description))
            #expect(stored["distance"] == 31.4)
            #expect(stored["title"] == "Lunch ride")
            #expect(try harness.server.store.list(ObjectsSeed.schema.resources[1], filters: [:]).total == 3)
        }
    }

    @Test("dependencies go out as \"activities\": [ids], and the server points them")
    func dependencies() async throws {
        try await withObjectsServer { harness in
            let grace = try await ObjectsSeed.User.get(id: 2, in: harness.store)
            #expect(grace.activities.isEmpty)
            let all = try await ObjectsSeed.Activity.get(in: harness.store)
            grace.activities = [all[1]]
            try await grace.save()
            #expect(try harness.server.store.find("activities", id: "2")?["user_id"] == 2)
            #expect(try harness.server.store.find("activities", id: "1")?["user_id"] == 1)
            try await grace.fetch()
            #expect(grace.activities.map(\.id) == [2])
        }
    }

    @Test(
        "search: GET /activity/<term>; delete: DELETE /activity/ with the id in the body, or the id in the path one setting away"
    )
    func searchAndDelete() async throws {
        try await withObjectsServer { harness in
            let found = try await ObjectsSeed.Activity.search("climb", in: harness.store)
            #expect(harness.journal.entries.last == "GET /activity/climb")
            #expect(found.map(\.id) == [1])
            try await found[0].delete()
            // The seed's endpoint: the server finds the record by the id in the MessagePack body.
            let request = try #require(harness.journal.requests.last)
            #expect(request.line == "DELETE /activity/")
            #expect(request.contentType == "application/x-msgpack")
            #expect(try harness.server.store.find("activities", id: "1") == nil)
            #expect(try harness.server.store.find("activities", id: "2") != nil)
            let missing = await #expect(throws: APIError.self) {
                try await ObjectsSeed.Activity.get(id: 1, in: harness.store)
            }
            #expect(missing?.response?.status == .notFound)
        }
        try await withObjectsServer(destroy: "/:singular/:id") { harness in
            let run = try await ObjectsSeed.Activity.get(id: 2, in: harness.store)
            try await run.delete()
            let request = try #require(harness.journal.requests.last)
            #expect(request.line == "DELETE /activity/2")
            #expect(request.contentType == nil)
            #expect(try harness.server.store.find("activities", id: "2") == nil)
        }
    }

    @Test("an explicit format is kept over the preset's MessagePack, set before or after the preset")
    func explicitFormat() async throws {
        for formatFirst in [true, false] {
            let configure = { (configuration: inout MonoRail.Configuration) in
                if formatFirst { configuration.format = .json }
                configuration.conventions = .objects
                if !formatFirst { configuration.format = .json }
                configuration.middleware.append(.currentUser { ObjectsSeed.SignedIn() })
            }
            let server = ReferenceServer.Configuration(envelope: .objects, bearerToken: "objects-secret")
            try await withHarness(schema: ObjectsSeed.schema, server: server, configure: configure) { harness in
                let user = try await ObjectsSeed.User.get(id: 1, in: harness.store)
                #expect(user.name == "Ada")
                #expect(harness.journal.requests.last?.accept == "application/json")
                user.name = "Ada L."
                try await user.save()
                #expect(harness.journal.requests.last?.contentType?.hasPrefix("application/json") == true)
            }
        }
        try await withObjectsServer { harness in
            _ = try await ObjectsSeed.User.get(id: 1, in: harness.store)
            #expect(harness.journal.requests.last?.accept?.hasPrefix("application/x-msgpack") == true)
        }
    }

    @Test("without the user's cookie the server refuses; a user signing in takes effect on the next request")
    func currentUser() async throws {
        let session = Session()
        try await withObjectsServer(session: session) { harness in
            let refused = await #expect(throws: APIError.self) {
                try await ObjectsSeed.User.get(id: 1, in: harness.store)
            }
            #expect(refused?.response?.status == .unauthorized)
            session.user = ObjectsSeed.SignedIn()
            let ada = try await ObjectsSeed.User.get(id: 1, in: harness.store)
            #expect(ada.name == "Ada")
        }
    }

    @Test(
        "file(name:url:): a user's image kept in the file cache, replaced when its URL changes, credentials for the API's origin only"
    )
    func perObjectFile() async throws {
        let cache = try FileCache(directory: files.path("files"), maxBytes: 1 << 20)
        // Another origin: a second server on another port, as a CDN would be.
        try await withHarness { cdn in
            try await withObjectsServer(fileCache: cache) { harness in
                let portrait = UploadModelTests.randomData(4_000)
                let photo = UploadModelTests.randomData(6_000)
                let portraitPath = try await Self.upload(portrait, to: harness.server.baseURL, token: "objects-secret")
                let photoPath = try await Self.upload(photo, to: cdn.server.baseURL, token: nil)
                let photoURL = cdn.server.baseURL.absoluteString + photoPath
                let users = try #require(ObjectsSeed.schema.resources.first)
                _ = try harness.server.store.update(users, id: "1", attributes: ["image_url": .string(portraitPath)])

                let user = try await ObjectsSeed.User.get(id: 1, in: harness.store)
                harness.journal.reset()
                cdn.journal.reset()
                // On the API's origin: sent as the app's requests are, with the user's cookie (the
                // server refuses it without).
                #expect(try await user.file(name: "image", url: user.imageURL) == portrait)
                #expect(harness.journal.requests.map(\.line) == ["GET \(portraitPath)"])
                #expect(harness.journal.requests.first?.authorization == "Bearer objects-secret")
                // Kept: asked again, served from the cache with no request.
                #expect(try await user.file(name: "image", url: user.imageURL) == portrait)
                #expect(harness.journal.count == 1)

                // The server points the image at the CDN; a pull brings the new URL, and the file
                // comes from there, without the app's credentials, replacing the old one.
                _ = try harness.server.store.update(users, id: "1", attributes: ["image_url": .string(photoURL)])
                try await user.fetch()
                #expect(user.imageURL == photoURL)
                #expect(try await user.file(name: "image", url: user.imageURL) == photo)
                #expect(cdn.journal.requests.map(\.line) == ["GET \(photoPath)"])
                #expect(cdn.journal.requests.first?.authorization == nil)
                #expect(cache.count == 1)
                #expect(cache.data(for: try #require(URL(string: photoURL))) == photo)

                // Kept across a dead CDN: served with no request.
                await cdn.server.stop()
                #expect(try await user.file(name: "image", url: user.imageURL) == photo)
                // No URL, no file.
                #expect(try await user.file(name: "image", url: nil as String?) == nil)
            }
        }
        // A store without a file cache says so rather than answering nil.
        try await withObjectsServer { harness in
            let user = try await ObjectsSeed.User.get(id: 1, in: harness.store)
            let error = await #expect(throws: APIError.self) {
                try await user.file(name: "image", url: "/uploads/1")
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains("configuration.fileCache") == true)
        }
    }

    /// Uploads bytes to a reference server and returns the path it serves them at.
    static func upload(_ bytes: Data, to baseURL: URL, token: String?) async throws -> String {
        var fields = HTTPFields()
        if let token { fields[.authorization] = "Bearer \(token)" }
        let api = APIClient(
            configuration: .init(baseURL: baseURL, transport: MonoRail.defaultTransport, defaultHeaders: fields))
        var form = MultipartFormData()
        form.append(FileUpload(fileName: "image.bin", data: bytes), name: "file")
        let reply = try await api.send(APIRequest(method: .post, path: "/uploads", body: .multipart(form))).json()
        return try #require(reply["uploads"]?[0]?["url"]?.stringValue)
    }

    @Test("the registry resolves Objects' class names and Apic's type names")
    func registry() {
        var registry = ModelRegistry()
        registry.register(ObjectsSeed.User.self, ObjectsSeed.Activity.self)
        registry.register(ObjectsSeed.User.self)
        #expect(registry.models.count == 2)
        #expect(registry.model(singular: "activity") == ObjectsSeed.Activity.self)
        #expect(registry.model(plural: "activities") == ObjectsSeed.Activity.self)
        #expect(registry.model(named: "User") == ObjectsSeed.User.self)
        #expect(registry.model(plural: "comments") == nil)
    }

    @Test("var dictionary: an instance as the wire shows it, the map a push sends")
    func dictionary() async throws {
        try await withObjectsServer { harness in
            let activity = try await ObjectsSeed.Activity.get(id: 1, in: harness.store)
            #expect(try activity.json == ["id": 1, "title": "Morning climb", "distance": 12.5, "user_id": 1])
            let dictionary = try activity.dictionary
            #expect(dictionary["title"] as? String == "Morning climb")
            #expect(dictionary["distance"] as? Double == 12.5)
            #expect(dictionary["user_id"] as? Int64 == 1)
            let user = try await ObjectsSeed.User.get(id: 1, in: harness.store)
            // A dependency list as the seed sends it, under the field's name.
            #expect(try user.json == ["id": 1, "name": "Ada", "image_url": nil, "activities": [1, 2]])
            // Nothing but what the wire holds: a new record has no id yet, a missing value is null.
            let draft = ObjectsSeed.Activity()
            draft.title = "Draft"
            #expect(try draft.json == ["title": "Draft", "distance": nil, "user_id": nil])
            #expect(try draft.dictionary["distance"] is NSNull)
        }
    }

    @Test("ClassesType.type(from:): the registry builds an instance of the model a name denotes")
    func typeFromJSON() async throws {
        try await withObjectsServer { harness in
            let models = harness.store.configuration.models
            let json: JSONValue = ["id": 1, "title": "Morning climb (edited elsewhere)", "distance": 13]
            // `add: false`: an instance of its own, read with the model's rules.
            let detached = try models.instance(named: "activity", from: json, in: harness.store)
            let activity = try #require(detached as? ObjectsSeed.Activity)
            #expect(activity.title == "Morning climb (edited elsewhere)")
            #expect(activity.distance == 13)
            #expect(harness.store.instance(of: ObjectsSeed.Activity.self, id: 1) == nil)
            // `add: true`: the store's instance, by singular, plural or type name.
            let live = try await ObjectsSeed.Activity.get(id: 1, in: harness.store)
            for name in ["activity", "activities", "Activity"] {
                let added = try models.instance(named: name, from: json, adding: true, in: harness.store)
                #expect(added === live)
            }
            #expect(live.title == "Morning climb (edited elsewhere)")
            // A name no registered model has is said, not a nil.
            let unknown = #expect(throws: APIError.self) {
                _ = try models.instance(named: "ascent", from: json, in: harness.store)
            }
            #expect(unknown?.code == .invalidRequest)
            #expect(unknown?.message.contains(#"no registered model is named "ascent""#) == true)
            // A record the model's rules refuse is refused here too.
            let refused = #expect(throws: APIError.self) {
                _ = try models.instance(named: "activity", from: ["title": ["not", "text"]], in: harness.store)
            }
            #expect(refused?.code == .decodingFailed)
        }
    }
}

/// Who is signed in, changed while requests are made.
final class Session: Sendable {
    private let current = Locked<(any UserType)?>(nil)
    var user: (any UserType)? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
