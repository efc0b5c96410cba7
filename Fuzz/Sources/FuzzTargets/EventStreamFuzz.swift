import Foundation
import MonoRailClient

/// A `text/event-stream` body: whatever a server sends. Fed whole and fed in chunks cut where the
/// first byte says, the parser gives the same events; an event it hands out is within its size
/// bound, valid UTF-8, with a name and an id free of line ends.
enum EventStreamFuzz {
    static let maxEventSize = 512

    static func run(_ data: Data) {
        guard let first = data.first else { return }
        let body = data.dropFirst()
        var whole = ServerSentEventParser(maxEventSize: maxEventSize)
        let expected = whole.parse(Data(body)).map(describe)
        var chunked = ServerSentEventParser(maxEventSize: maxEventSize)
        var outputs: [String] = []
        let step = Int(first % 13) + 1
        var start = body.startIndex
        while start < body.endIndex {
            let end = min(start + step, body.endIndex)
            outputs += chunked.parse(Data(body[start..<end])).map(describe)
            start = end
        }
        if outputs != expected { fatalError("chunks of \(step) bytes gave \(outputs), whole \(expected)") }
        for case .event(let event) in whole.parse(Data("\n\n".utf8)) { check(event) }
    }

    static func check(_ event: ServerSentEvent) {
        if event.data.count > maxEventSize { fatalError("an event of \(event.data.count) bytes passed the bound") }
        if String(validating: event.data, as: UTF8.self) == nil { fatalError("an event's data is not UTF-8") }
        // CR and LF end lines in an event stream; other breaks (a form feed, U+2028) are text.
        for text in [event.type, event.id ?? ""] where text.utf8.contains(where: { $0 == 10 || $0 == 13 }) {
            fatalError("a line end inside \(text.debugDescription)")
        }
    }

    static func describe(_ output: ServerSentEventParser.Output) -> String {
        switch output {
        case .event(let event):
            check(event)
            return "event \(event.type) \(event.id ?? "-") \(event.data.base64EncodedString())"
        case .lastEventID(let id): return "id \(id)"
        case .retry(let delay): return "retry \(delay)"
        case .failure(let error): return "failure \(error.code)"
        }
    }
}
