import Foundation
import MonoRail
import MonoRailTransport
import Testing

/// A client of a server's `GET /changes`: the ids of the events it read, in order.
final class ChangeStreamReader: Sendable {
    let ids = Locked<[Int64]>([])
    /// Where a stream "from now" began: the id its opening `id:` line gave.
    let start = Locked<Int64?>(nil)
    let task: Task<Void, any Error>

    init(_ client: APIClient, fromStart: Bool) {
        let (ids, start) = (self.ids, self.start)
        task = Task {
            let request = APIRequest(method: .get, path: "/changes", query: fromStart ? ["after": "0"] : [:])
            let (_, body) = try await client.stream(request)
            var parser = ServerSentEventParser(maxEventSize: 1 << 20)
            for try await chunk in body {
                for output in parser.parse(chunk) {
                    switch output {
                    case .event(let event) where event.type != "reset":
                        guard let id = event.id.flatMap({ Int64($0) }) else { continue }
                        ids.withLock { $0.append(id) }
                    case .event:
                        Issue.record("a reset on a log that keeps every change")
                    case .lastEventID(let id):
                        start.withLock { $0 = $0 ?? Int64(id) }
                    case .retry, .failure:
                        continue
                    }
                }
            }
        }
    }

    var seen: [Int64] { ids.withLock { $0 } }
}
