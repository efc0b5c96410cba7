import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

@Suite("Conventions and presets", .timeLimit(.minutes(5)))
struct ConventionTests {
    @Test("a compound class name becomes train_car, /train_cars")
    func naming() async throws {
        #expect(TrainCar.resourceName == "train_car")
        #expect(TrainCar.resourcePlural == "train_cars")
        #expect(TrainCar.resourcePath == "/train_cars")
        #expect(Person.resourcePlural == "members")
        #expect(Gauge.resourcePath == "/meta/gauges")
        try await withCanned { server, store in
            server.respond(to: "GET /train_cars/1", body: #"{"train_car": {"id": 1, "position": 3}}"#)
            server.respond(to: "GET /train_cars", body: #"{"train_cars": [{"id": 1, "position": 4}]}"#)
            server.respond(to: "GET /club/members/2", body: #"{"member": {"id": 2, "name": "Ada"}}"#)
            let car = try await TrainCar.get(id: 1, in: store)
            #expect(car.position == 3)
            #expect(try await TrainCar.get(in: store).first === car)
            #expect(car.position == 4)
            #expect(try await Person.get(id: 2, in: store).name == "Ada")
        }
    }

    @Test("route templates per action, PATCH and changed fields only")
    func routesPerModel() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /post/5.json", body: #"{"post": {"id": 5, "title": "Hi", "body": "Text"}}"#)
            server.respond(to: "PATCH /post/5.json", body: #"{"post": {"id": 5, "title": "Hello", "body": "Text"}}"#)
            let post = try await Post.get(id: 5, in: store)
            post.title = "Hello"
            try await post.save()
            let sent = try #require(server.requests.last)
            #expect(sent.hasPrefix("PATCH /post/5.json "))
            #expect(try recordedBody(sent) == ["post": ["title": "Hello"]])
        }
    }

    @Test("ids are percent-encoded as one path segment")
    func idsInPaths() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains/a%2Fb%20c%3F", body: #"{"train": {"id": "a/b c?", "company": "Odd"}}"#)
            let train = try await Train.get(id: "a/b c?", in: store)
            #expect(train.id == "a/b c?")
        }
    }

    @Test("a root namespace wraps every response")
    func namespace() async throws {
        var conventions = ServerConventions.rails
        conventions.rootNamespace = "data.payload"
        try await withCanned(conventions: conventions) { server, store in
            server.respond(to: "GET /trains/1", body: #"{"data": {"payload": {"train": {"id": 1, "company": "NS"}}}}"#)
            server.respond(
                to: "GET /trains", body: #"{"data": {"payload": {"trains": [{"id": 1, "company": "NS2"}]}}}"#)
            server.respond(to: "GET /trains/2", body: #"{"data": {"train": {"id": 2}}}"#)
            #expect(try await Train.get(id: 1, in: store).company == "NS")
            #expect(try await Train.get(in: store).first?.company == "NS2")
            let error = try await #require(throws: APIError.self) { try await Train.get(id: 2, in: store) }
            #expect(error.code == .decodingFailed)
        }
    }

    @Test("search uses ?q= with Rails conventions")
    func railsSearch() async throws {
        try await withCanned { server, store in
            server.respond(to: "GET /trains?q=Mono", body: #"{"trains": [{"id": 1, "company": "MonoRail Co."}]}"#)
            let found = try await Train.search("Mono", in: store)
            #expect(found.map(\.company) == ["MonoRail Co."])
        }
    }

    @Test("no API root is a clear error before any request")
    func missingRoot() async throws {
        let store = ResourceStore()
        let error = try await #require(throws: APIError.self) { try await Train.get(id: 1, in: store) }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("MonoRail.register(apiRootURL:)"))
    }

    @Test("fetch and delete of a record never created are typed errors")
    func notPersisted() async throws {
        let train = Train()
        let fetchError = try await #require(throws: APIError.self) { try await train.fetch() }
        #expect(fetchError.code == .notPersisted)
        let deleteError = try await #require(throws: APIError.self) { try await train.delete() }
        #expect(deleteError.code == .notPersisted)
    }
}

@Suite("Callbacks and blocking calls", .timeLimit(.minutes(5)))
struct CallbackTests {
    @Test("success and failure callbacks, as in the seed")
    func callbacks() async throws {
        try await withHarness { harness in
            let train: Train = try await withCheckedThrowingContinuation { continuation in
                Train.get(
                    id: 1, in: harness.store, success: { continuation.resume(returning: $0) },
                    failure: { continuation.resume(throwing: $0) })
            }
            #expect(train.company == "MonoRail Co.")
            let error: APIError = await withCheckedContinuation { continuation in
                Train.get(
                    id: 999, in: harness.store, success: { _ in Issue.record("expected a failure") },
                    failure: { continuation.resume(returning: $0) })
            }
            #expect(error.statusCode == 404)
            #expect(error.domain == "Not Found")
        }
    }

    @Test("blocking variants work from a plain thread, as in a script")
    func blocking() async throws {
        try await withHarness { harness in
            let store = harness.store
            let company: String? = try await onPlainThread {
                let train = try Train.blocking(in: store).get(id: 2)
                train.maxSpeed = 301
                try train.blocking.save()
                return train.company
            }
            #expect(company == "Deutsche Bahn AG")
            #expect(try harness.server.store.find("trains", id: "2")?["max_speed"] == 301.0)
        }
    }
}
