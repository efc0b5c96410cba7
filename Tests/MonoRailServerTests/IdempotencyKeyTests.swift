import Foundation
import HTTPTypes
import MonoRail
import MonoRailServer
import TestServer
import Testing

/// The reference server's `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) and
/// `If-Match` handling, over HTTP.
@Suite("Reference server: Idempotency-Key and If-Match", .timeLimit(.minutes(5)))
struct IdempotencyKeyTests {
    static let keyHeader = HTTPField.Name("Idempotency-Key") ?? .accept

    /// Sends a request with a body and headers; the response whatever its status.
    static func send(
        _ client: APIClient, _ method: HTTPRequest.Method, _ path: String, body: JSONValue? = nil,
        headers: HTTPFields = HTTPFields()
    ) async throws -> (status: Int, body: JSONValue?, headers: HTTPFields) {
        var request = APIRequest(
            method: method, path: APIPath(verbatim: path), headers: headers,
            body: body.map { .raw(.data($0.jsonData(sortedKeys: true)), contentType: "application/json") })
        request.options.retryPolicy = RetryPolicy.none
        do {
            let response = try await client.send(request)
            let parsed = response.body.isEmpty ? nil : try JSONParser().parse(response.body)
            return (response.statusCode, parsed, response.response.headerFields)
        } catch let error as APIError {
            return (error.statusCode ?? 0, error.parsedBody, HTTPFields())
        }
    }

    static func keyed(_ key: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[keyHeader] = key
        return fields
    }

    static func trainCount(_ running: RunningReferenceServer) throws -> Int {
        let trains = try #require(running.store.schema.resource(plural: "trains"))
        return try running.store.list(trains, filters: [:]).total
    }

    @Test("a create repeated with its key answers the stored response and creates nothing more")
    func repeatedCreate() async throws {
        try await withServer { running, client in
            let body: JSONValue = ["train": ["company": "Once Rail", "number_of_cars": 2]]
            let before = try Self.trainCount(running)
            let first = try await Self.send(client, .post, "/trains", body: body, headers: Self.keyed("\"create-1\""))
            let second = try await Self.send(client, .post, "/trains", body: body, headers: Self.keyed("\"create-1\""))
            // The bare form of the same key is the same key.
            let third = try await Self.send(client, .post, "/trains", body: body, headers: Self.keyed("create-1"))
            #expect(first.status == 201)
            #expect(second.status == 201 && third.status == 201)
            #expect(first.body != nil && second.body == first.body && third.body == first.body)
            #expect(second.headers[.location] == first.headers[.location])
            #expect(try Self.trainCount(running) == before + 1)
            let ledger = try running.store.idempotencyLedger()
            #expect(ledger.map(\.key) == ["create-1"])
            #expect(ledger.first?.status == 201 && ledger.first?.method == "POST" && ledger.first?.path == "/trains")
        }
    }

    @Test("a key reused for another body or path is 422 and changes nothing")
    func reusedKey() async throws {
        try await withServer { running, client in
            let key = Self.keyed("k-reused")
            let made = try await Self.send(client, .post, "/trains", body: ["company": "A"], headers: key)
            #expect(made.status == 201)
            let count = try Self.trainCount(running)
            let otherBody = try await Self.send(client, .post, "/trains", body: ["company": "B"], headers: key)
            #expect(otherBody.status == 422)
            #expect(otherBody.body?["message"]?.stringValue?.contains("Idempotency-Key") == true)
            let otherPath = try await Self.send(client, .patch, "/trains/1", body: ["company": "A"], headers: key)
            #expect(otherPath.status == 422)
            #expect(try Self.trainCount(running) == count)
            #expect(try running.store.find("trains", id: "1")?["company"] == "MonoRail Co.")
        }
    }

    @Test("keys must be 1 to 255 characters", arguments: [(255, 201), (256, 400), (0, 400)])
    func keyLength(length: Int, status: Int) async throws {
        try await withServer { running, client in
            let before = try Self.trainCount(running)
            let answer = try await Self.send(
                client, .post, "/trains", body: ["company": "Long Key"],
                headers: Self.keyed("\"" + String(repeating: "k", count: length) + "\""))
            #expect(answer.status == status)
            #expect(try Self.trainCount(running) == before + (status == 201 ? 1 : 0))
        }
    }

    @Test("a repeat while the first is still being carried out is 409")
    func inFlight() async throws {
        try await withServer { running, client in
            // The first request's body arrives in two parts, the second only when the test says:
            // until then its key is in flight.
            let body = Data(#"{"company": "Waiting Rail"}"#.utf8)
            let (parts, sender) = AsyncThrowingStream<Data, any Error>.makeStream()
            sender.yield(body.prefix(10))
            var request = APIRequest(
                method: .post, path: "/trains", headers: Self.keyed("slow"),
                body: .raw(.stream(parts, length: Int64(body.count)), contentType: "application/json"))
            request.options.retryPolicy = RetryPolicy.none
            let first = Task { try await client.send(request) }
            // Once the first request's head is in, its key is taken before its body is read.
            for _ in 0..<500 where running.journal.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let second = try await Self.send(
                client, .post, "/trains", body: ["company": "Waiting Rail"], headers: Self.keyed("slow"))
            #expect(second.status == 409)
            sender.yield(body.dropFirst(10))
            sender.finish()
            let answered = try await first.value
            #expect(answered.statusCode == 201)
            let after = try await Self.send(
                client, .post, "/trains", body: ["company": "Waiting Rail"], headers: Self.keyed("slow"))
            let firstBody = try JSONParser().parse(answered.body)
            #expect(after.status == 201 && after.body == firstBody)
            #expect(try running.store.idempotencyLedger().count == 1)
        }
    }

    @Test("an update and a delete repeated with their keys answer as the first time")
    func repeatedUpdateAndDelete() async throws {
        try await withServer { running, client in
            let first = try await Self.send(
                client, .patch, "/trains/1", body: ["company": "First"], headers: Self.keyed("u1"))
            _ = try await Self.send(client, .patch, "/trains/1", body: ["company": "Second"])
            let repeated = try await Self.send(
                client, .patch, "/trains/1", body: ["company": "First"], headers: Self.keyed("u1"))
            #expect(repeated.status == 200 && repeated.body == first.body)
            #expect(try running.store.find("trains", id: "1")?["company"] == "Second", "the repeat changed nothing")
            let deleted = try await Self.send(client, .delete, "/cars/3", headers: Self.keyed("d1"))
            let again = try await Self.send(client, .delete, "/cars/3", headers: Self.keyed("d1"))
            #expect(deleted.status == 204 && again.status == 204)
            let unkeyed = try await Self.send(client, .delete, "/cars/3")
            #expect(unkeyed.status == 404)
            // A write that found nothing is not kept: the key was not used up.
            let missing = try await Self.send(client, .delete, "/cars/999", headers: Self.keyed("d2"))
            #expect(missing.status == 404)
            #expect(try running.store.idempotencyLedger().map(\.key) == ["u1", "d1"])
        }
    }

    @Test("a response dropped mid-body after the write: the repeat gets the stored answer, one record")
    func droppedResponse() async throws {
        try await withTemporaryFile { path in
            try await withServer(configuration: .init(databasePath: path, faults: .init(dropRate: 1))) {
                dropping, client in
                let before = try Self.trainCount(dropping)
                let body: JSONValue = ["company": "Dropped Rail"]
                let lost = try await Self.send(client, .post, "/trains", body: body, headers: Self.keyed("drop-1"))
                #expect(lost.status == 0, "the connection dropped")
                try await withServer(configuration: .init(databasePath: path)) { healthy, client in
                    let answer = try await Self.send(
                        client, .post, "/trains", body: body, headers: Self.keyed("drop-1"))
                    #expect(answer.status == 201)
                    #expect(answer.body?["train"]?["company"] == "Dropped Rail")
                    #expect(try Self.trainCount(healthy) == before + 1)
                }
            }
        }
    }

    @Test("If-Match: a stale entity tag is 412 and changes nothing; the current one or * writes")
    func ifMatch() async throws {
        try await withServer { running, client in
            let shown = try await Self.send(client, .get, "/trains/1")
            let etag = try #require(shown.headers[.eTag])
            var stale = HTTPFields()
            stale[.ifMatch] = "\"0\""
            let refused = try await Self.send(client, .patch, "/trains/1", body: ["company": "Stale"], headers: stale)
            #expect(refused.status == 412)
            #expect(try running.store.find("trains", id: "1")?["company"] == "MonoRail Co.")
            var current = HTTPFields()
            current[.ifMatch] = etag
            let updated = try await Self.send(client, .patch, "/trains/1", body: ["company": "Fresh"], headers: current)
            #expect(updated.status == 200)
            let newTag = try #require(updated.headers[.eTag])
            #expect(newTag != etag)
            #expect(try await Self.send(client, .get, "/trains/1").headers[.eTag] == newTag, "the next show's tag")
            let again = try await Self.send(client, .patch, "/trains/1", body: ["company": "Again"], headers: current)
            #expect(again.status == 412, "the old tag no longer matches")
            let refusedDelete = try await Self.send(client, .delete, "/trains/2", headers: stale)
            #expect(refusedDelete.status == 412)
            var any = HTTPFields()
            any[.ifMatch] = "*"
            #expect(try await Self.send(client, .delete, "/trains/2", headers: any).status == 204)
            #expect(try await Self.send(client, .delete, "/trains/2", headers: any).status == 404)
        }
    }
}

/// A path for a SQLite file in a new temporary directory, removed afterwards.
func withTemporaryFile(_ body: (String) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await body(directory.appendingPathComponent("server.sqlite").path)
}
