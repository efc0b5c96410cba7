import Foundation
import Logging
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

@testable import MonoRail

/// Rails' `belongs_to :subject, polymorphic: true`: a comment on a train or a car.
@Resource(name: "comment")
final class Remark {
    var body: String?
    @References(polymorphic: true) var subject: (any ResourceModel)?
}

@Suite("Polymorphic references: subject_type and subject_id, resolved through the registry", .timeLimit(.minutes(5)))
struct PolymorphicReferenceTests {
    /// The trains example with comments on trains and cars.
    static let schema: ServerSchema = {
        var schema = ServerSchema.trains
        schema.resources.append(
            ResourceSchema(
                name: "comment", fields: [FieldSchema(name: "body", type: .string)],
                relationships: [RelationshipSchema(kind: .belongsTo, name: "subject", polymorphic: true)]))
        schema.seed?["comments"] = [
            ["body": "Smooth ride", "subject_type": "Train", "subject_id": 1],
            ["body": "Squeaky door", "subject_type": "Car", "subject_id": 2],
        ]
        return schema
    }()

    func withComments(_ body: (TestAPI) async throws -> Void) async throws {
        try await withHarness(
            schema: Self.schema, configure: { $0.models.register(Seed.Train.self, Seed.Car.self) }, body)
    }

    @Test("reads resolve the live instance of the named model; load() fetches it once")
    func read() async throws {
        try await withComments { harness in
            let comment = try await Remark.get(id: 1, in: harness.store)
            #expect(comment.subject == nil)  // the train is not live: no request from a read
            let loaded = try await comment.$subject.load()
            #expect(harness.journal.entries.last == "GET /trains/1")
            let train = try #require(loaded as? Seed.Train)
            #expect(train.company == "MonoRail Co.")
            #expect(try await Seed.Train.get(id: 1, in: harness.store) === train)
            #expect(comment.subject as? Seed.Train === train)
        }
    }

    @Test("?include=subject side-loads each record's subject under its own plural, adopted with no request")
    func sideLoaded() async throws {
        try await withComments { harness in
            let comments = try await Remark.get(where: [:], include: ["subject"], in: harness.store)
            let requests = harness.journal.count
            #expect((comments[0].subject as? Seed.Train)?.company == "MonoRail Co.")
            #expect((comments[1].subject as? Seed.Car)?.occupancy == 12)
            #expect(harness.journal.count == requests)
        }
    }

    @Test("assigning writes subject_type and subject_id, saved and read back raw")
    func write() async throws {
        try await withComments { harness in
            let comment = try await Remark.get(id: 1, in: harness.store)
            let car = try await Seed.Car.get(id: 3, in: harness.store)
            comment.subject = car
            #expect(Set(comment.changes.keys) == ["subject", "subjectType"])
            #expect(comment.subject as? Seed.Car === car)
            try await comment.save()
            let stored = try #require(try harness.server.store.find("comments", id: "1"))
            #expect(stored["subject_type"] == "Car")
            #expect(stored["subject_id"] == 3)
            #expect(!comment.hasChanges)

            comment.subject = nil
            try await comment.save()
            #expect(try harness.server.store.find("comments", id: "1")?["subject_type"] == .null)
        }
    }

    @Test("a type no registered model has reads as nil, and loading it says which name and how to register")
    func unknownType() async throws {
        try await withComments { harness in
            let comment = try Remark.merge(
                json: ["id": 9, "body": "?", "subject_type": "Depot", "subject_id": 4], in: harness.store)
            #expect(comment.subject == nil)
            let error = await #expect(throws: APIError.self) { try await comment.$subject.load() }
            #expect(error?.code == .invalidRequest)
            #expect(error?.message.contains(#"refers to a "Depot""#) == true)
            #expect(harness.journal.count == 0)
        }
    }

    @Test("the server refuses a type that names no resource")
    func serverRefusesUnknownType() async throws {
        try await withComments { harness in
            let error = await #expect(throws: APIError.self) {
                try await harness.store.client.send(
                    APIRequest(
                        method: .post, path: "/comments",
                        body: .json(["comment": ["subject_type": "Ghost", "subject_id": 1]] as JSONValue)))
            }
            #expect(error?.errors["subject"] == ["must exist"])
        }
    }

    @Test("a model names itself in subject_type as it chooses; the registry resolves that name")
    func ownName() async throws {
        var schema = Self.schema
        let cars = try #require(schema.resources.firstIndex { $0.name == "car" })
        schema.resources[cars].typeName = "Fleet::Wagon"
        schema.seed?["comments"] = [["body": "Smooth ride", "subject_type": "Train", "subject_id": 1]]
        let configure = { (configuration: inout MonoRail.Configuration) in
            configuration.models.register(Seed.Train.self, FleetWagon.self)
        }
        try await withHarness(schema: schema, configure: configure) { harness in
            let comment = try await Remark.get(id: 1, in: harness.store)
            let wagon = try await FleetWagon.get(id: 3, in: harness.store)
            comment.subject = wagon
            try await comment.save()
            #expect(try harness.server.store.find("comments", id: "1")?["subject_type"] == "Fleet::Wagon")

            let other = try Remark.merge(
                json: ["id": 8, "body": "Roomy", "subject_type": "Fleet::Wagon", "subject_id": 2], in: harness.store)
            let loaded = try await other.$subject.load()
            #expect(harness.journal.entries.last == "GET /cars/2")
            #expect((loaded as? FleetWagon)?.occupancy == 12)
            // The server's side-load names the same class.
            let listed = try await Remark.get(where: [:], include: ["subject"], in: harness.store)
            #expect(listed.first?.subject === wagon)
            #expect(harness.store.configuration.models.model(named: "Fleet::Wagon") == FleetWagon.self)
        }
    }

    @Test("two registered models with one name are said when configured, and a record naming it is refused")
    func ambiguousName() async throws {
        try await withHarness(schema: Self.schema) { harness in
            let log = LogCapture()
            harness.store.configure {
                $0.logger = log.logger(level: .error)
                $0.models.register(Seed.Car.self, FleetWagon.self, Seed.Train.self)
            }
            #expect(harness.store.configuration.models.ambiguousNames == ["car", "cars"])
            #expect(
                log.all.map(\.message).contains {
                    $0.hasPrefix(#"two registered models are named "car""#)
                })
            let error = #expect(throws: APIError.self) {
                _ = try harness.store.configuration.models.instance(
                    named: "car", from: ["id": 1], in: harness.store)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains("Car and FleetWagon are both named \"car\"") == true)
            let remark = try Remark.merge(
                json: ["id": 7, "body": "?", "subject_type": "car", "subject_id": 1], in: harness.store)
            let refused = await #expect(throws: APIError.self) { try await remark.$subject.load() }
            #expect(refused?.code == .invalidConfiguration)
            #expect(harness.journal.count == 0)
        }
    }
}

/// The reference server's cars, named in polymorphic references as the server's Rails app names
/// its class.
@Resource(name: "car")
final class FleetWagon {
    var occupancy: Int?

    static var polymorphicName: String { "Fleet::Wagon" }
}
