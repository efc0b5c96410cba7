import Foundation
import MonoRail
import TestModels
import TestServer
import Testing

/// MonoRail's models against a real Django REST framework app with the `.djangoREST` preset.
@Suite("Django REST framework interop", .timeLimit(.minutes(5)))
struct DjangoInteropTests {
    func withDjango(
        extraTrains: Int = 0, configure: (inout MonoRail.Configuration) -> Void = { _ in },
        _ body: (ResourceStore) async throws -> Void
    ) async throws {
        let server = try await PythonServer.django(extraTrains: extraTrains)
        defer { server.stop() }
        var configuration = MonoRail.Configuration.testing(server.baseURL)
        configuration.conventions = .djangoREST
        configure(&configuration)
        try await body(ResourceStore(configuration: configuration))
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
            #expect(error.errors["company"] == ["This field is required."])
            #expect(error.errors.fullMessages == ["Company: This field is required."])
            #expect(nameless.numberOfCars == 3)
            #expect(nameless.id == nil)
        }
    }

    /// Pages through 1,000 trains while another client creates some between pages; the query ends
    /// holding each train once, in id order, with DRF's count.
    func pageThrough(_ store: ResourceStore) async throws {
        let trains = try await Train.query(pageSize: 100, in: store)
        #expect(trains.instances.count == 100)
        #expect(trains.total == 1000)
        let other = ResourceStore(configuration: store.configuration)
        var page = 1
        while trains.hasNextPage {
            if page % 3 == 0 {
                for index in 0..<4 {
                    let train = Train()
                    train.company = "Added \(page).\(index)"
                    try await train.create(in: other)
                }
            }
            try await trains.loadNextPage()
            page += 1
            #expect(page < 40)
        }
        let ids = trains.instances.compactMap { $0.id?.description }
        #expect(ids.count == 1012)
        #expect(ids == (1...1012).map(String.init), "each once, in order")
        #expect(trains.total == 1012)
    }

    @Test("pages of 1,000 trains in DRF's {count, next, results} envelope: page/page_size")
    func pageNumberPaging() async throws {
        try await withDjango(extraTrains: 998) { store in
            try await pageThrough(store)
        }
    }

    static func limitOffset(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.paging.style = .offsets(limit: "limit", offset: "offset")
    }

    @Test("pages of 1,000 trains in DRF's envelope: limit/offset")
    func limitOffsetPaging() async throws {
        try await withDjango(extraTrains: 998, configure: Self.limitOffset) { store in
            try await pageThrough(store)
        }
    }

    @Test("a live query with IN, a range and an order, in django-filter's and OrderingFilter's words")
    func liveQuery() async throws {
        try await withDjango(extraTrains: 20) { store in
            // Bulk trains run at 0…19 km/h; the seeded ones at 46.8 and 300.
            let trains = try await Train.query(
                where: ["company": ["MonoRail Co.", "Deutsche Bahn AG", "Bulk 7"], "max_speed": .atLeast(7)],
                order: [.descending("max_speed")], in: store)
            #expect(trains.instances.map(\.company) == ["Deutsche Bahn AG", "MonoRail Co.", "Bulk 7"])
            let bulk = try #require(trains.instances.last)
            bulk.maxSpeed = 6.5
            try await bulk.save()
            #expect(trains.instances.map(\.company) == ["Deutsche Bahn AG", "MonoRail Co."])
            try await trains.refresh()
            #expect(trains.instances.map(\.company) == ["Deutsche Bahn AG", "MonoRail Co."])
        }
    }
}
