import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import MonoRailTransport
import TestServer
import Testing

/// A kept write is the user's intent, fixed when it is kept; time is read as time: a server's
/// `Retry-After` is capped, a waiting write holds back no other, and a write kept when offline
/// does not first wait out the whole retry cycle.
@Suite("The outbox over time: fixed bodies, Retry-After, waiting writes, offline deadline", .timeLimit(.minutes(5)))
struct OutboxTimeTests {
    @Test("every attempt under one Idempotency-Key sends the same bytes, whatever changed on the server meanwhile")
    func sameBytesEveryAttempt() async throws {
        let transport = FaultTransport.underTest()
        try await withHarness {
            OutboxTests.queued(&$0)
            $0.transport = transport
        } _: { harness in
            let train = try await QueuedTrain.get(id: 1, in: harness.store)
            await harness.store.outbox.pause()
            train.company = "Kept Rail"
            try await train.save()
            // The first attempt is applied, its answer lost on the way back.
            transport.loseAnswers(to: "PUT /trains/1")
            try? await harness.store.outbox.flush()
            #expect(try harness.server.store.find("trains", id: "1")?["company"] == "Kept Rail")
            // Another client changes a field this write did not touch, before the second attempt.
            let other = ResourceStore(configuration: .testing(harness.server.baseURL))
            let theirs = try await QueuedTrain.get(id: 1, in: other)
            theirs.numberOfCars = 42
            try await theirs.save()
            // Our store hears of it (a read here; a push would do the same) under the kept edit.
            _ = try await QueuedTrain.get(id: 1, in: harness.store)
            #expect(train.numberOfCars == 42 && train.company == "Kept Rail")
            try await harness.store.outbox.flush()

            let bodies = transport.bodies(of: "PUT /trains/1")
            #expect(bodies.count == 2, "two attempts")
            #expect(bodies.first == bodies.last, "the retry carried the first attempt's bytes")
            #expect(harness.store.outbox.parked.isEmpty && harness.store.outbox.pendingCount == 0)
            let stored = try harness.server.store.find("trains", id: "1")
            #expect(stored?["company"] == "Kept Rail" && stored?["number_of_cars"] == 42)
            #expect(try harness.server.store.idempotencyLedger().count == 1, "applied once")
        }
    }

    @Test("a Retry-After of 2^63-1 seconds does not trap; past the maximum age the write parks at once")
    func hostileRetryAfter() async throws {
        try await withScriptedServer {
            OutboxTests.queued(&$0)
            $0.outboxLimits = OutboxLimits(maximumAge: .seconds(10))
        } _: { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A"}}"#)
            server.respond(
                to: "PUT /trains/1", status: 503, body: #"{"error": "busy"}"#,
                headers: ["Retry-After": "9223372036854775807"])
            let train = try await QueuedTrain.get(id: 1, in: store)
            train.company = "B"
            try await train.save()
            try? await store.outbox.flush()
            #expect(try await eventually { store.outbox.parked.count == 1 })
            let parked = try #require(store.outbox.parked.first)
            #expect(parked.parking?.statusCode == 503)
            #expect(parked.parking?.message.contains("past the outbox's maximum age of 10 s") == true)
            #expect(train.company == "B" && train.hasChanges && train.rejection?.statusCode == 503)
        }
    }

    @Test("a server's Retry-After is capped at an hour; the write waits, unparked, within its age")
    func cappedRetryAfter() async throws {
        try await withScriptedServer(store: OutboxTests.queued) { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A"}}"#)
            server.respond(
                to: "PUT /trains/1", status: 503, body: #"{"error": "busy"}"#,
                headers: ["Retry-After": "9223372036854775807"])
            let events = store.outbox.events
            let train = try await QueuedTrain.get(id: 1, in: store)
            train.company = "B"
            try await train.save()
            var delay: Duration?
            for await event in events {
                if case .retrying(_, _, let after) = event {
                    delay = after
                    break
                }
            }
            #expect(delay == .seconds(3_600))
            #expect(store.outbox.parked.isEmpty && store.outbox.pendingCount == 1)
        }
    }

    @Test("a write waiting out one record's Retry-After holds back no write of another record")
    func waitingWriteHoldsNoOther() async throws {
        try await withScriptedServer(store: OutboxTests.queued) { server, store in
            for id in [1, 2] {
                server.respond(to: "GET /trains/\(id)", body: #"{"train": {"id": \#(id), "company": "A"}}"#)
            }
            server.respond(
                to: "PUT /trains/1", status: 503, body: #"{"error": "busy"}"#, headers: ["Retry-After": "600"])
            server.respond(to: "PUT /trains/2", body: #"{"train": {"id": 2, "company": "Second"}}"#)
            let first = try await QueuedTrain.get(id: 1, in: store)
            let second = try await QueuedTrain.get(id: 2, in: store)
            first.company = "First"
            try await first.save()
            #expect(try await eventually { server.requests.contains { $0.hasPrefix("PUT /trains/1") } })
            second.company = "Second"
            try await second.save()
            #expect(try await eventually { !second.hasPendingChanges }, "sent without waiting ten minutes")
            #expect(server.requests.contains { $0.hasPrefix("PUT /trains/2") })
            #expect(first.hasPendingChanges && store.outbox.pendingCount == 1)
        }
    }

    @Test("queued when offline: a server that answers nothing keeps the write at the offline deadline, then at once")
    func offlineDeadline() async throws {
        try await withScriptedServer {
            OutboxTests.queuedWhenOffline(&$0)
            $0.offlineDeadline = .milliseconds(300)
        } _: { server, store in
            server.respond(to: "GET /trains/1", body: #"{"train": {"id": 1, "company": "A"}}"#)
            server.respond(to: "PUT /trains/1", body: #"{"train": {"id": 1, "company": "Held"}}"#, after: .seconds(3))
            let train = try await QueuedTrain.get(id: 1, in: store)
            await store.outbox.pause()
            train.company = "Held"
            let answer = try await train.save()
            #expect(answer.source == .outbox, "kept, not waited for")
            #expect(store.outbox.pendingCount == 1 && train.hasPendingChanges)
            #expect(store.isOffline)
            // Known offline: the next write is kept without another attempt.
            let before = server.requests.count
            train.numberOfCars = 3
            #expect(try await train.save().source == .outbox)
            #expect(server.requests.count == before)
            // The server answers again: the kept writes go, the first under the key it was tried with.
            server.respond(to: "PUT /trains/1", body: #"{"train": {"id": 1, "company": "Held", "number_of_cars": 3}}"#)
            try await store.outbox.flush()
            #expect(store.outbox.pendingCount == 0 && !train.hasPendingChanges && !store.isOffline)
        }
    }
}
