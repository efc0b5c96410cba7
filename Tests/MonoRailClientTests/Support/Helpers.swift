import Foundation
import HTTPTypes
import Logging
import MonoRail
import TestServer
import Testing

/// A clock whose sleeps return at once and are recorded, so retry delays can be asserted exactly.
final class RecordingClock: Clock, Sendable {
    typealias Instant = ContinuousClock.Instant
    private let state = Locked<(now: ContinuousClock.Instant, sleeps: [Duration])>((ContinuousClock.now, []))

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(deadline - state.now)
            state.now = deadline
        }
    }
}

/// A client for the shared test server, on the platform's default transport, with retries that
/// never really wait.
func makeClient(
    _ server: TestServer,
    transport: (any Transport)? = nil,
    clock: RecordingClock = RecordingClock(),
    _ configure: (inout APIClient.Configuration) -> Void = { _ in }
) -> APIClient {
    var configuration = APIClient.Configuration(
        baseURL: server.baseURL, transport: transport ?? MonoRail.defaultTransport)
    configuration.clock = clock
    configure(&configuration)
    return APIClient(configuration: configuration)
}

/// What `/echo` reports about a request.
struct Echo: Decodable, Sendable {
    var method: String
    var path: String
    var rawQuery: String
    var query: [String: JSONValue]
    var headers: [String: String]
    var body: String
    var bodyLength: Int

    var bodyJSON: JSONValue? { try? JSONParser().parse(Data(body.utf8)) }
}

/// Percent-encodes a value for the `/respond` endpoint's query.
func q(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}
