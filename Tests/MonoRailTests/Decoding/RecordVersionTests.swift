import Foundation
import MonoRail
import MonoRailTesting
import Testing

/// Which of two states of a record is newer, by its version as servers write it: local times with
/// offsets (Rails' `config.time_zone`, Django's `TIME_ZONE`) compared as instants, counters as numbers.
@Suite("Record versions as time", .timeLimit(.minutes(2)))
struct RecordVersionTests {
    @Test("across a daylight-saving fall-back, a save's answer at 02:10+01:00 is newer than a read at 02:30+02:00")
    func fallBack() async throws {
        try await withCanned { server, store in
            server.respond(
                to: "GET /trains/1",
                body: #"{"train": {"id": 1, "company": "Before", "updated_at": "2026-10-25T02:30:00.000+02:00"}}"#)
            // An hour of wall time later in Berlin, 40 minutes later as an instant, "earlier" as text.
            server.respond(
                to: "PUT /trains/1",
                body: #"{"train": {"id": 1, "company": "Edited", "updated_at": "2026-10-25T02:10:00.000+01:00"}}"#)
            let train = try await QueuedTrain.get(id: 1, in: store)
            train.company = "Edited"
            try await train.save()
            #expect(train.company == "Edited" && !train.hasChanges)
            // The earlier state read again (a replica behind): older as an instant, it changes nothing.
            _ = try await QueuedTrain.get(id: 1, in: store)
            #expect(train.company == "Edited")
        }
    }

    @Test("a lock_version sent as text is a counter: \"10\" is newer than \"9\"")
    func counterAsText() async throws {
        try await withCanned { server, store in
            store.configure { $0.conventions.versionKey = "lock_version" }
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "Ten", "lock_version": "10"}}"#)
            server.respond(
                to: "GET /trains/1?v=9", body: #"{"train": {"id": 1, "company": "Nine", "lock_version": "9"}}"#)
            let train = try await QueuedTrain.get(id: 1, in: store)
            _ = try await QueuedTrain.get(id: 1, parameters: ["v": 9], in: store)
            #expect(train.company == "Ten", "the older state, read later, changes nothing")
        }
    }
}
