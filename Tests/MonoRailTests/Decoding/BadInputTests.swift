import Foundation
import MonoRail
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// Every hostile or inconsistent response gives a typed error and leaves the store and every live
/// instance exactly as they were.
@Suite("Bad responses change nothing", .timeLimit(.minutes(5)))
struct BadInputTests {
    static let good = #"{"train": {"id": 1, "company": "MonoRail Co.", "number_of_cars": 5, "max_speed": 46.8}}"#

    /// Loads train 1, runs `failing`, and checks that the store and the instance did not move.
    func expectNothingChanges(
        _ answers: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation,
        _ failing: @escaping @Sendable (ResourceStore) async throws -> Void
    ) async throws -> APIError? {
        var caught: APIError?
        try await withCanned { server, store in
            server.respond(to: "GET /trains/1", body: Self.good)
            let train = try await Train.get(id: 1, in: store)
            train.maxSpeed = 50  // a local edit that must survive
            for (line, body) in answers { server.respond(to: line, body: body) }
            let before = (store.count, train.company, train.numberOfCars, train.maxSpeed, train.changes)
            do {
                try await failing(store)
                Issue.record("expected an error", sourceLocation: sourceLocation)
            } catch let error as APIError {
                caught = error
            }
            #expect(store.count == before.0, sourceLocation: sourceLocation)
            #expect(train.company == before.1, sourceLocation: sourceLocation)
            #expect(train.numberOfCars == before.2, sourceLocation: sourceLocation)
            #expect(train.maxSpeed == before.3, sourceLocation: sourceLocation)
            #expect(train.changes == before.4, sourceLocation: sourceLocation)
            #expect(store.instance(of: Train.self, id: 1) === train, sourceLocation: sourceLocation)
        }
        return caught
    }

    @Test(
        "a wrong type in any field fails the whole record",
        arguments: [
            (#""company": 5"#, "company"), (#""number_of_cars": "5""#, "numberOfCars"),
            (#""number_of_cars": 5.5"#, "numberOfCars"), (#""max_speed": "fast""#, "maxSpeed"),
            (#""in_service": "yes""#, "inService"), (#""built_at": "yesterday""#, "builtAt"),
            (#""tags": "a,b""#, "tags"), (#""tags": [1]"#, "tags"), (#""in_service": null"#, "inService"),
        ])
    func wrongType(member: String, field: String) async throws {
        let error = try await expectNothingChanges([
            ("GET /trains/1", #"{"train": {"id": 1, "company": "Changed", \#(member)}}"#)
        ]) { store in _ = try await Train.get(id: 1, in: store) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.field == field)
    }

    @Test(
        "values no Swift field can hold exactly fail at decode time, naming model, field and path",
        arguments: [
            // Dates a later save() could not write back (it trapped there before).
            (#""built_at": 1e19"#, "builtAt"), (#""built_at": -1e19"#, "builtAt"),
            (#""built_at": 253402300800"#, "builtAt"), (#""built_at": "0000-01-01T00:30:00+01:00""#, "builtAt"),
            // Numbers that rounded into an integer field.
            (#""number_of_cars": 99e-99999999999"#, "numberOfCars"),
            (#""number_of_cars": -9223372036854775809"#, "numberOfCars"),
            (#""number_of_cars": 1.00000000000000000001"#, "numberOfCars"),
            (#""number_of_cars": 1e19"#, "numberOfCars"),
        ])
    func outOfRange(member: String, field: String) async throws {
        let error = try await expectNothingChanges([
            ("GET /trains/1", #"{"train": {"id": 1, "company": "Changed", \#(member)}}"#)
        ]) { store in _ = try await Train.get(id: 1, in: store) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.typeName == "Train")
        #expect(error?.decodingFailure?.field == field)
        #expect(error?.decodingFailure?.path.hasPrefix("$.train.") == true, "\(String(describing: error))")
    }

    @Test("integer fields take every literal that spells an integer, however it is written")
    func integralLiterals() async throws {
        try await withCanned { server, store in
            for (literal, expected) in [("5.0", 5), ("5e0", 5), ("500e-2", 5), ("0.5E1", 5), ("-0.0", 0)] {
                server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "number_of_cars": \#(literal)}}"#)
                let train = try await Train.get(id: 1, in: store)
                #expect(train.numberOfCars == expected, "\(literal)")
            }
            let dates = [
                ("-62167219200", "0000-01-01T00:00:00.000Z"), ("253402300799.999", "9999-12-31T23:59:59.999Z"),
            ]
            for (seconds, expected) in dates {
                server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "built_at": \#(seconds)}}"#)
                let train = try await Train.get(id: 1, in: store)
                let date = try #require(train.builtAt)
                #expect(DateFormat.iso8601WithFractionalSeconds.string(from: date) == expected)
            }
        }
    }

    @Test("a list where one record is bad merges none of them")
    func badRecordInList() async throws {
        let error = try await expectNothingChanges([
            (
                "GET /trains",
                #"{"trains": [{"id": 1, "company": "Changed"}, {"id": 2, "company": "New"}, {"id": 3, "max_speed": "x"}]}"#
            )
        ]) { store in _ = try await Train.get(in: store) }
        #expect(error?.decodingFailure?.path == "$.trains[2].max_speed")
    }

    @Test(
        "one id twice in a list is an inconsistent response",
        arguments: [
            #"{"trains": [{"id": 1, "company": "A"}, {"id": 1, "company": "B"}]}"#,
            // Rising ids, then one seen before; and one id spelled as text and as a number.
            #"{"trains": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 2, "company": "B"}]}"#,
            #"{"trains": [{"id": 1}, {"id": 2}, {"id": "2", "company": "B"}]}"#,
        ])
    func duplicateIDs(body: String) async throws {
        let error = try await expectNothingChanges([("GET /trains", body)]) { store in
            _ = try await Train.get(in: store)
        }
        #expect(error?.code == .inconsistentResponse)
        #expect(error?.message.contains("appears twice") == true)
    }

    @Test("an id that changes type is an inconsistent response")
    func idChangesType() async throws {
        let error = try await expectNothingChanges([
            ("GET /trains", #"{"trains": [{"id": 2, "company": "B"}, {"id": "1", "company": "Changed"}]}"#)
        ]) { store in _ = try await Train.get(in: store) }
        #expect(error?.code == .inconsistentResponse)
    }

    @Test("a response for another id than requested is refused")
    func otherID() async throws {
        let error = try await expectNothingChanges([
            ("GET /trains/7", #"{"train": {"id": 1, "company": "Changed"}}"#)
        ]) { store in _ = try await Train.get(id: 7, in: store) }
        #expect(error?.code == .inconsistentResponse)
    }

    @Test(
        "malformed bodies, missing ids and wrong shapes are decoding failures",
        arguments: [
            #"{"train": {"company": "no id"}}"#, #"{"train": {"id": null}}"#, #"{"train": {"id": 1.5}}"#,
            #"{"train": {"id": true}}"#, #"{"train": {"id": ""}}"#, #"{"train": [1, 2]}"#, #"[{"id": 1}]"#,
            #"{"train": {"id": 1, "company": "x""#, "", "null", #""text""#,
        ])
    func malformed(body: String) async throws {
        let error = try await expectNothingChanges([("GET /trains/1", body)]) { store in
            _ = try await Train.get(id: 1, in: store)
        }
        #expect(error?.code == .decodingFailed)
    }

    @Test("a failed fetch keeps the instance as it was")
    func failedFetch() async throws {
        let error = try await expectNothingChanges([
            ("GET /trains/1", #"{"train": {"id": 1, "company": "Changed", "number_of_cars": []}}"#)
        ]) { store in
            let train = try #require(store.instance(of: Train.self, id: 1))
            try await train.fetch()
        }
        #expect(error?.decodingFailure?.path == "$.train.number_of_cars")
    }

    @Test("unknown keys are ignored")
    func unknownKeys() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"{"train": {"id": 1, "company": "A", "colour": "red", "cars": [{"id": 1}], "meta": {"x": 1}}}"#)
            let train = try await Train.get(id: 1, in: store)
            #expect(train.company == "A")
        }
    }
}
