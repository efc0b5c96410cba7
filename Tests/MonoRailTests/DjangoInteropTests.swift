import Foundation
import MonoRail
import Testing

/// MonoRail's models against a real Django REST framework app with the `.djangoREST` preset.
@Suite("Django REST framework interop", .timeLimit(.minutes(2)))
struct DjangoInteropTests {
    func withDjango(_ body: (ResourceStore) async throws -> Void) async throws {
        let server = try await DjangoServer.start()
        defer { server.stop() }
        try await body(
            ResourceStore(
                configuration: .init(apiRootURL: server.baseURL, conventions: .djangoREST, retryPolicy: .none)))
    }

    @Test("CRUD with trailing slashes and bare bodies; dates with microseconds round-trip")
    func crud() async throws {
        try await withDjango { store in
            let train = Train()
            train.company = "Django Rail"
            train.builtAt = Date(timeIntervalSince1970: 1_714_979_289.123)
            train.tags = ["a", "b"]
            try await train.create(in: store)
            let id = try #require(train.id)
            #expect(train.company == "Django Rail")
            #expect(train.builtAt == Date(timeIntervalSince1970: 1_714_979_289.123))
            #expect(try await Train.get(id: id, in: store) === train)

            train.numberOfCars = 7
            try await train.save()
            #expect(!train.hasChanges)
            try await train.fetch()
            #expect(train.numberOfCars == 7)
            #expect(train.tags == ["a", "b"])

            try await train.delete()
            let error = try await #require(throws: APIError.self) { try await Train.get(id: id, in: store) }
            #expect(error.statusCode == 404)
        }
    }

    @Test("filters, search and validation errors in DRF's shapes")
    func queries() async throws {
        try await withDjango { store in
            let cars = try await Car.get(where: ["train_id": 1], in: store)
            #expect(cars.map(\.occupancy) == [40, 12])
            let found = try await Train.search("Deutsche", in: store)
            #expect(found.map(\.company) == ["Deutsche Bahn AG"])

            let nameless = Train()
            nameless.numberOfCars = 3
            let error = try await #require(throws: APIError.self) { try await nameless.create(in: store) }
            #expect(error.code == .validationFailed)
            #expect(error.statusCode == 400)
            #expect(error.errors["company"] == ["This field may not be null."])
            #expect(error.errors.fullMessages == ["Company: This field may not be null."])
            #expect(nameless.numberOfCars == 3)
            #expect(nameless.id == nil)
        }
    }
}
