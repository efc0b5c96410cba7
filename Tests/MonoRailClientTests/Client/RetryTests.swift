import Foundation
import MonoRail
import TestServer
import Testing

/// A generator with a fixed sequence, for exact jitter assertions.
struct FixedGenerator: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

@Suite("Retries", .timeLimit(.minutes(5)))
struct RetryTests {
    @Test("an idempotent GET is retried until it succeeds")
    func retriesGet() async throws {
        let server = try await TestServer.shared()
        let key = "flaky-\(UUID().uuidString)"
        let clock = RecordingClock()
        let result: JSONValue = try await makeClient(server, clock: clock).get("/flaky/\(key)?fail=2&status=503")
        #expect(result["attempts"] == 3)
        #expect(server.count(key) == 3)
        #expect(clock.sleeps.count == 2)
        let first = try #require(clock.sleeps.first)
        #expect(first >= .milliseconds(125) && first <= .milliseconds(250), "backoff 250 ms with 50% jitter")
        #expect(clock.sleeps[1] >= .milliseconds(250) && clock.sleeps[1] <= .milliseconds(500))
    }

    @Test("attempts are bounded")
    func bounded() async throws {
        let server = try await TestServer.shared()
        let key = "down-\(UUID().uuidString)"
        let error = await #expect(throws: APIError.self) {
            let _: JSONValue = try await makeClient(server).get("/flaky/\(key)?fail=100&status=502")
        }
        #expect(error?.statusCode == 502, "\(String(describing: error))")
        #expect(server.count(key) == 3)
    }

    @Test("a POST is not retried by default")
    func postNotRetried() async throws {
        let server = try await TestServer.shared()
        let key = "post-\(UUID().uuidString)"
        let error = await #expect(throws: APIError.self) {
            try await makeClient(server).post("/flaky/\(key)?fail=1", body: ["a": 1] as JSONValue, as: JSONValue.self)
        }
        #expect(error?.statusCode == 503, "\(String(describing: error))")
        #expect(server.count(key) == 1)
    }

    @Test("Retry-After sets the delay, in seconds or as an HTTP date")
    func retryAfter() async throws {
        let server = try await TestServer.shared()
        let key = "after-\(UUID().uuidString)"
        let clock = RecordingClock()
        let _: JSONValue = try await makeClient(server, clock: clock).get(
            "/flaky/\(key)?fail=1&status=429&retry_after=7")
        #expect(clock.sleeps == [.seconds(7)])
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.retryAfterDelay("Tue, 14 Nov 2023 22:13:30 GMT", now: now) == .seconds(10))
        #expect(RetryPolicy.retryAfterDelay("soon", now: now) == nil)
        // The furthest date the formatter reads is a finite delay, and over maxDelay it stops.
        let far = try #require(RetryPolicy.retryAfterDelay("Wed, 21 Oct 99999 07:28:00 GMT", now: now))
        #expect(far > .seconds(3_000_000_000_000))
        #expect(RetryPolicy.retryAfterDelay("Wed, 21 Oct 1999 07:28:00 GMT", now: now) == .zero)
    }

    @Test("a Retry-After longer than the maximum delay stops retrying")
    func retryAfterTooLong() async throws {
        let server = try await TestServer.shared()
        let key = "later-\(UUID().uuidString)"
        let clock = RecordingClock()
        let error = await #expect(throws: APIError.self) {
            let _: JSONValue = try await makeClient(server, clock: clock).get(
                "/flaky/\(key)?fail=1&status=503&retry_after=3600")
        }
        #expect(error?.statusCode == 503, "\(String(describing: error))")
        #expect(clock.sleeps.isEmpty)
        #expect(server.count(key) == 1)
    }

    @Test("a body that cannot be replayed is never sent twice, even for PUT")
    func nonReplayable() async throws {
        let server = try await TestServer.shared()
        let key = "stream-\(UUID().uuidString)"
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.yield(Data("{}".utf8))
        continuation.finish()
        let request = APIRequest(
            method: .put, path: "/flaky/\(key)?fail=1", body: .raw(.stream(stream), contentType: "application/json"))
        let error = await #expect(throws: APIError.self) { try await makeClient(server).send(request) }
        #expect(error?.statusCode == 503, "\(String(describing: error))")
        #expect(server.count(key) == 1)

        let replayable = APIRequest(method: .put, path: "/flaky/\(key)-data?fail=1", body: .json(["a": 1]))
        #expect(try await makeClient(server).send(replayable).statusCode == 200)
        #expect(server.count("\(key)-data") == 2)
    }

    @Test("the policy alone: methods, statuses, errors, backoff and jitter")
    func policy() {
        let policy = RetryPolicy.default
        var low = FixedGenerator(value: 0)
        var high = FixedGenerator(value: .max)
        let unavailable = RetryPolicy.Outcome.response(HTTPResponse(status: .serviceUnavailable))
        #expect(
            policy.decision(for: unavailable, attempt: 1, method: .get, bodyIsReplayable: true, using: &low)
                == .retry(after: .milliseconds(125)))
        guard
            case .retry(let longest) = policy.decision(
                for: unavailable, attempt: 2, method: .get, bodyIsReplayable: true, using: &high)
        else {
            Issue.record("expected a retry")
            return
        }
        #expect(longest > .milliseconds(499) && longest < .milliseconds(500))
        #expect(
            policy.decision(for: unavailable, attempt: 3, method: .get, bodyIsReplayable: true, using: &low) == .stop)
        #expect(
            policy.decision(for: unavailable, attempt: 1, method: .post, bodyIsReplayable: true, using: &low) == .stop)
        #expect(
            policy.decision(for: unavailable, attempt: 1, method: .put, bodyIsReplayable: false, using: &low) == .stop)
        #expect(
            policy.decision(
                for: .response(HTTPResponse(status: .notFound)), attempt: 1, method: .get, bodyIsReplayable: true,
                using: &low) == .stop)
        let timeout = RetryPolicy.Outcome.failure(TransportError(.timedOut, "slow"))
        #expect(
            policy.decision(for: timeout, attempt: 1, method: .delete, bodyIsReplayable: true, using: &low) != .stop)
        let cancelled = RetryPolicy.Outcome.failure(TransportError(.cancelled, "stop"))
        #expect(policy.decision(for: cancelled, attempt: 1, method: .get, bodyIsReplayable: true, using: &low) == .stop)
        var capped = RetryPolicy(maxAttempts: 20, maxDelay: .seconds(2), jitter: 0)
        capped.baseDelay = .seconds(1)
        #expect(
            capped.decision(for: unavailable, attempt: 10, method: .get, bodyIsReplayable: true, using: &low)
                == .retry(after: .seconds(2)))
        #expect(
            RetryPolicy.none.decision(for: unavailable, attempt: 1, method: .get, bodyIsReplayable: true, using: &low)
                == .stop)
    }

    @Test("a per-call policy overrides the client's")
    func perCall() async throws {
        let server = try await TestServer.shared()
        let key = "percall-\(UUID().uuidString)"
        let error = await #expect(throws: APIError.self) {
            let _: JSONValue = try await makeClient(server).get(
                "/flaky/\(key)?fail=1", options: RequestOptions(retryPolicy: RetryPolicy.none))
        }
        #expect(error?.statusCode == 503, "\(String(describing: error))")
        #expect(server.count(key) == 1)
    }
}

@Suite("Retries after a reset", .timeLimit(.minutes(5)))
struct ResetRetryTests {
    @Test("a reset connection is retried like a closed one")
    func resetIsRetried() async throws {
        let server = try await RawServer.start([.reset])
        defer { Task { await server.stop() } }
        var configuration = APIClient.Configuration(baseURL: server.baseURL, transport: MonoRail.defaultTransport)
        configuration.clock = RecordingClock()
        let error = await #expect(throws: APIError.self) {
            let _: JSONValue = try await APIClient(configuration: configuration).get("/trains/1")
        }
        #expect(error?.code == .connectionClosed, "\(String(reflecting: error))")
        #expect(server.connections == 3)
    }
}
