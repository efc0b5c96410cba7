import Foundation
import HTTPTypes
import Hummingbird
import MonoRail
import MonoRailTesting
import MonoRailTransport
import NIOCore
import TestModels
import Testing

/// What no real server sends on purpose, over a real socket: each connection to `GET /changes` is
/// answered by the next scripted stream (the last one again when they run out).
final class StreamScript: Sendable {
    typealias Stream = @Sendable (inout any ResponseBodyWriter) async throws -> Void
    struct Answer: Sendable {
        var status: HTTPResponse.Status = .ok
        var contentType = "text/event-stream"
        var stream: Stream
    }

    private let answers: Locked<[Answer]>
    /// The `Last-Event-ID` of each connection, in order (`""` for none).
    let connections = Locked<[String]>([])

    init(_ answers: [Answer]) { self.answers = Locked(answers) }

    func next(lastEventID: String?) -> Answer {
        connections.withLock { $0.append(lastEventID ?? "") }
        return answers.withLock { answers in answers.count > 1 ? answers.removeFirst() : answers[0] }
    }

    /// Writes `text`, then keeps the stream open until the client goes.
    static func thenHold(_ text: String) -> Stream {
        { writer in
            try await writer.write(ByteBuffer(string: text))
            try await Task.sleep(for: .seconds(600))
        }
    }

    /// Serves the script and runs `body` with a store reading it as its live updates.
    func serve(
        configure: (inout MonoRail.Configuration) -> Void = { _ in },
        _ body: (ResourceStore) async throws -> Void
    ) async throws {
        let router = Router()
        router.get("/changes") { request, _ -> Response in
            let answer = self.next(lastEventID: HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] })
            var headers = HTTPFields()
            headers[.contentType] = answer.contentType
            return Response(
                status: answer.status, headers: headers,
                body: ResponseBody { writer in
                    try await answer.stream(&writer)
                    try await writer.finish(nil)
                })
        }
        let (port, task) = try await MonoRailTesting.serve(router, name: "StreamScript")
        var configuration = MonoRail.Configuration.testing(URL(string: "http://127.0.0.1:\(port)"))
        configuration.liveUpdates = .serverSentEvents(path: "/changes")
        configuration.liveUpdates?.reconnectDelay = .milliseconds(20)
        configure(&configuration)
        let store = ResourceStore(configuration: configuration)
        do {
            try await body(store)
        } catch {
            store.liveUpdates.disconnect()
            task.cancel()
            throw error
        }
        store.liveUpdates.disconnect()
        task.cancel()
    }
}

@Suite("Hostile event streams", .timeLimit(.minutes(5)))
struct HostileStreamTests {
    /// Whether the transport under test is URLSession on Linux.
    #if canImport(FoundationNetworking)
        let readerMayFallBehind = transportUnderTest is URLSessionTransport
    #else
        let readerMayFallBehind = false
    #endif

    static let good = "id: 9\nevent: updated\ndata: {\"train\": {\"id\": 1, \"company\": \"After\"}}\n\n"

    /// A live train 1 in `store`, as the events below expect it.
    func heldTrain(in store: ResourceStore) throws -> Train {
        try Train.merge(json: ["id": 1, "company": "Before", "max_speed": 10], in: store)
    }

    @Test(
        "a 10 MB data line, 10 MB with no line end, invalid UTF-8: reported, the stream opened again from the last event merged, the next one merged"
    )
    func oversizedAndInvalid() async throws {
        let huge = String(repeating: "x", count: 10 << 20)
        var invalid = Data("id: 3\nevent: updated\ndata: {\"train\": {\"id\": 1, \"company\": \"".utf8)
        invalid += [0xC3, 0x28]
        invalid += Data("\"}}\n\n".utf8)
        let cases: [(String, Data, APIError.Code)] = [
            ("a data line of 10 MB", Data("id: 1\nevent: updated\ndata: \(huge)\n\n".utf8), .responseTooLarge),
            ("no line end for 10 MB", Data(huge.utf8) + Data("\n\n".utf8), .responseTooLarge),
            ("invalid UTF-8", invalid, .decodingFailed),
        ]
        for (name, bytes, code) in cases {
            for repeats in [false, true] {
                try await oversized(name, bytes, code, repeats: repeats)
            }
        }
    }

    /// One case of ``oversizedAndInvalid()``: the bad event and a good one after it, sent once (the
    /// stream opened again gets the good one again) or on every connection (passed over the third time).
    private func oversized(_ name: String, _ bytes: Data, _ code: APIError.Code, repeats: Bool) async throws {
        do {
            let bad = StreamScript.Answer { writer in
                // In pieces, as a network delivers them.
                var start = 0
                while start < bytes.count {
                    let end = min(start + 65_536, bytes.count)
                    try await writer.write(ByteBuffer(bytes: bytes[start..<end]))
                    start = end
                }
                try await writer.write(ByteBuffer(string: Self.good))
                try await Task.sleep(for: .seconds(600))
            }
            let script = StreamScript(repeats ? [bad] : [bad, .init(stream: StreamScript.thenHold(Self.good))])
            try await script.serve {
                $0.limits.maxEventSize = 1 << 20
            } _: { store in
                let train = try heldTrain(in: store)
                try await store.liveUpdates.connect()
                #expect(try await eventually { train.company == "After" }, "\(name)")
                #expect(store.liveUpdates.lastError?.code == code, "\(name)")
                #expect(try await eventually { store.liveUpdates.lastEventID == "9" }, "\(name)")
                #expect(store.liveUpdates.state.isLive, "\(name)")
                // Opened again from the last event merged (none here), so the server sent what followed;
                // a server that sends the bad event every time has it passed over the third time. Over
                // FoundationNetworking, which cannot pause a transfer, a reader that fell behind the
                // 10 MB may have opened it again once more.
                if !readerMayFallBehind {
                    #expect(
                        script.connections.withLock { $0 } == Array(repeating: "", count: repeats ? 3 : 2), "\(name)")
                }
            }
        }
    }

    @Test(
        "an unknown event, an unknown model, a malformed body, a list with one bad record: skipped and reported, nothing merged in part"
    )
    func unreadableEvents() async throws {
        let events = [
            "id: 1\nevent: teleported\ndata: {\"train\": {\"id\": 1, \"company\": \"No\"}}\n\n",
            "id: 2\nevent: updated\ndata: {\"locomotive\": {\"id\": 1}}\n\n",
            "id: 3\nevent: updated\ndata: {\"train\": {\"id\": 1, \"company\": \n\n",
            "id: 4\nevent: updated\ndata: {\"trains\": [{\"id\": 1, \"company\": \"Half\"}, {\"id\": 2, \"max_speed\": \"fast\"}]}\n\n",
            "id: 5\nevent: destroyed\ndata: {\"train\": {\"company\": \"no id\"}}\n\n",
        ]
        let script = StreamScript([.init(stream: StreamScript.thenHold(events.joined() + Self.good))])
        try await script.serve { store in
            let train = try heldTrain(in: store)
            let problems = Locked<[APIError.Code]>([])
            let listening = Task {
                for await event in store.liveUpdates.events {
                    if case .problem(let error) = event { problems.withLock { $0.append(error.code) } }
                }
            }
            defer { listening.cancel() }
            try await Task.sleep(for: .milliseconds(20))
            let changes = Locked<[String?]>([])
            let watching = Task {
                for await update in train.updates where update.kind == .merged {
                    changes.withLock { $0.append(train.company) }
                }
            }
            defer { watching.cancel() }
            try await store.liveUpdates.connect()
            #expect(try await eventually { train.company == "After" })
            #expect(try await eventually { problems.withLock { $0.count } == 5 })
            #expect(problems.withLock { $0 } == Array(repeating: .decodingFailed, count: 5))
            #expect(store.instance(of: Train.self, id: 2) == nil)
            #expect(!train.isDeleted)
            // Never "Half": the list with a bad record merged nothing.
            #expect(try await eventually { changes.withLock { $0 } == ["After"] })
        }
    }

    @Test("a stream cut mid-event reconnects with the last id merged; silence past the idle timeout reconnects")
    func reconnects() async throws {
        let script = StreamScript([
            .init { writer in
                try await writer.write(
                    ByteBuffer(
                        string:
                            "retry: 10\nid: 4\nevent: updated\ndata: {\"train\": {\"id\": 1, \"company\": \"Four\"}}\n\nid: 5\nevent: upd"
                    ))
            },
            .init { _ in try await Task.sleep(for: .seconds(600)) },
            .init(stream: StreamScript.thenHold(Self.good)),
        ])
        try await script.serve {
            $0.liveUpdates?.idleTimeout = .milliseconds(300)
        } _: { store in
            let train = try heldTrain(in: store)
            try await store.liveUpdates.connect()
            #expect(try await eventually { train.company == "After" })
            // The half event was never merged; the silent connection was given up.
            #expect(script.connections.withLock { $0 } == ["", "4", "4"])
            // The cursor moves once the burst it ends is merged: a moment after the instance shows it.
            #expect(try await eventually { store.liveUpdates.lastEventID == "9" })
        }
    }

    @Test("no event stream, a 404: connect() throws and the state says why; a 503 is waited through")
    func refusals() async throws {
        let notStream = StreamScript([
            .init(contentType: "application/json") { try await $0.write(ByteBuffer(string: "{}")) }
        ])
        try await notStream.serve { store in
            let error = await #expect(throws: APIError.self) { try await store.liveUpdates.connect() }
            #expect(error?.code == .invalidResponse)
            guard case .stopped(let stopped) = store.liveUpdates.state else {
                Issue.record("not stopped: \(store.liveUpdates.state)")
                return
            }
            #expect(stopped?.code == .invalidResponse)
        }
        let missing = StreamScript([
            .init(status: .notFound, contentType: "application/json") {
                try await $0.write(ByteBuffer(string: #"{"error": "Not Found"}"#))
            }
        ])
        try await missing.serve { store in
            let error = await #expect(throws: APIError.self) { try await store.liveUpdates.connect() }
            #expect(error?.statusCode == 404)
        }
        let busy = StreamScript([
            .init(status: .serviceUnavailable, contentType: "application/json") {
                try await $0.write(ByteBuffer(string: "{}"))
            },
            .init(stream: StreamScript.thenHold(Self.good)),
        ])
        try await busy.serve { store in
            let train = try heldTrain(in: store)
            try await store.liveUpdates.connect()
            #expect(try await eventually { train.company == "After" })
            #expect(busy.connections.withLock { $0.count } == 2)
            #expect(store.liveUpdates.lastError?.statusCode == 503)
        }
    }
}

@Suite("Live updates as JSON:API documents", .timeLimit(.minutes(2)))
struct JSONAPILiveUpdatesTests {
    @Test("a pushed document finds its model by the resource's type; a destroy needs only type and id")
    func documents() async throws {
        let events = [
            #"id: 1\#nevent: created\#ndata: {"data": {"type": "trains", "id": "9", "attributes": {"company": "Pushed"}}}\#n\#n"#,
            #"id: 2\#nevent: updated\#ndata: {"data": [{"type": "trains", "id": "9", "attributes": {"number_of_cars": 4}}]}\#n\#n"#,
            #"id: 3\#nevent: updated\#ndata: {"data": {"type": "planes", "id": "1"}}\#n\#n"#,
            #"id: 4\#nevent: destroyed\#ndata: {"data": {"type": "trains", "id": "9"}}\#n\#n"#,
        ]
        let script = StreamScript([.init(stream: StreamScript.thenHold(events.joined()))])
        try await script.serve {
            $0.conventions = .jsonAPI
            $0.models.register(Rail.Train.self)
        } _: { store in
            // Held before the stream starts, as a screen would hold it; merge(json:) takes a plain record.
            let train = try Rail.Train.merge(json: ["id": "9", "company": "Old"], in: store)
            let problems = Locked<[String]>([])
            let listening = Task {
                for await event in store.liveUpdates.events {
                    if case .problem(let error) = event { problems.withLock { $0.append(error.message) } }
                }
            }
            defer { listening.cancel() }
            try await store.liveUpdates.connect()
            #expect(try await eventually { store.liveUpdates.lastEventID == "4" })
            #expect(train.company == "Pushed")
            #expect(train.numberOfCars == 4, "the second event's partial record, merged")
            #expect(train.isDeleted)
            #expect(try await eventually { problems.withLock { $0.count } == 1 })
            #expect(problems.withLock { $0.first?.contains("\"planes\"") } == true)
        }
    }
}
