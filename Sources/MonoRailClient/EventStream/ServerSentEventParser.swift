public import Foundation

/// Reads a `text/event-stream` body as it arrives, chunk by chunk, into ``ServerSentEvent``s, as the
/// WHATWG EventSource specification ("Interpreting an event stream") reads it: lines ended by CR, LF
/// or CRLF (even split across chunks), a leading byte order mark skipped, `event`, `data` over
/// several lines, `id` (ignored when it holds NUL), `retry` (digits only), comments (`:`) and unknown
/// fields passed over, an event dispatched at each blank line and dropped when the stream ends
/// before it.
///
/// Memory is bounded by ``maxEventSize``: an event growing past it — a data line of 10 MB, or no
/// line end at all — is dropped, its bytes passed over until the blank line that ends it, and
/// reported once as a ``Output/failure(_:)``; so is an event with a line that is not UTF-8. The stream
/// goes on after either.
///
/// ```swift
/// var parser = ServerSentEventParser(maxEventSize: 1 << 20)
/// for try await chunk in body {
///     for output in parser.parse(chunk) {
///         if case .event(let event) = output { print(event.type, event.text) }
///     }
/// }
/// ```
public struct ServerSentEventParser: Sendable {
    /// What a chunk brought.
    public enum Output: Sendable {
        /// An event, dispatched by a blank line.
        case event(ServerSentEvent)
        /// The last event id changed at a blank line that dispatched no event (an `id` field with
        /// no `data`): a cursor to resume from.
        case lastEventID(String)
        /// The server's `retry` field: how long to wait before reconnecting.
        case retry(Duration)
        /// An event dropped: larger than ``maxEventSize``, or not UTF-8.
        case failure(APIError)
    }

    /// The largest event kept, counting its field lines and their line ends.
    public let maxEventSize: Int

    /// The line read so far, without its end.
    private var line: [UInt8] = []
    /// The event's `data` lines so far, each followed by a line feed.
    private var data: [UInt8] = []
    private var eventType: String?
    /// The id the next dispatched event carries; it outlives the event.
    private var lastEventID: String?
    private var lastEventIDAtDispatch: String?
    /// Bytes of the event so far, for ``maxEventSize``.
    private var eventSize = 0
    /// A CR ended the last chunk: an LF at the start of the next one belongs to it.
    private var afterCR = false
    /// Whether an event is being dropped, and how far.
    private var dropping = Dropping.no
    /// Whether the line being passed over had any bytes: an empty one ends the dropped event.
    private var droppedLineHasBytes = false

    private enum Dropping: Sendable {
        case no
        /// The current line is passed over to its end.
        case line
        /// Lines are passed over until the blank line that ends the event.
        case untilBlankLine
    }
    /// Bytes of a possible byte order mark seen at the start of the stream.
    private var bomProgress = 0

    /// Creates a parser.
    ///
    /// - Parameter maxEventSize: The largest event kept, in bytes.
    public init(maxEventSize: Int) {
        self.maxEventSize = max(1, maxEventSize)
    }

    /// The stream's last event id: what a reconnection sends as `Last-Event-ID`.
    public var currentLastEventID: String? { lastEventID }

    /// Reads a chunk of the stream.
    ///
    /// - Returns: What it completed, in stream order.
    public mutating func parse(_ chunk: Data) -> [Output] {
        var outputs: [Output] = []
        chunk.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            let count = bytes.count
            while bomProgress < 3, index < count {
                let expected: UInt8 = [0xEF, 0xBB, 0xBF][bomProgress]
                guard bytes[index] == expected else {
                    // Not a byte order mark: what looked like its start is text.
                    if bomProgress > 0 { appendToLine([0xEF, 0xBB, 0xBF][0..<bomProgress], &outputs) }
                    bomProgress = 3
                    break
                }
                bomProgress += 1
                index += 1
            }
            if afterCR, index < count {
                afterCR = false
                if bytes[index] == 0x0A { index += 1 }
            }
            while index < count {
                // The next line end, CR or LF.
                var end = index
                while end < count, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
                appendToLine(UnsafeBufferPointer(rebasing: bytes[index..<end]), &outputs)
                guard end < count else { break }
                if bytes[end] == 0x0D {
                    if end + 1 < count {
                        if bytes[end + 1] == 0x0A { end += 1 }
                    } else {
                        afterCR = true
                    }
                }
                endLine(&outputs)
                index = end + 1
            }
        }
        return outputs
    }

    private mutating func appendToLine<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ outputs: inout [Output]) {
        guard !bytes.isEmpty else { return }
        guard dropping == .no else {
            droppedLineHasBytes = true
            return
        }
        guard eventSize + line.count + bytes.count <= maxEventSize else {
            drop(
                APIError(
                    .responseTooLarge,
                    "an event of the stream is larger than \(maxEventSize) bytes; it was passed over"),
                &outputs)
            return
        }
        line.append(contentsOf: bytes)
    }

    /// Passes the event over from the current line on, reporting why.
    private mutating func drop(_ failure: APIError, _ outputs: inout [Output]) {
        outputs.append(.failure(failure))
        dropping = .line
        line = []
        data = []
        eventType = nil
        eventSize = 0
    }

    private mutating func endLine(_ outputs: inout [Output]) {
        defer { line.removeAll(keepingCapacity: line.capacity <= 4096) }
        switch dropping {
        case .line:
            dropping = .untilBlankLine
            droppedLineHasBytes = false
            return
        case .untilBlankLine:
            // The blank line that ends the dropped event: the next one starts clean.
            if !droppedLineHasBytes { dropping = .no }
            droppedLineHasBytes = false
            return
        case .no:
            break
        }
        if line.isEmpty {
            dispatch(&outputs)
            return
        }
        eventSize += line.count + 1
        if line[0] == 0x3A { return }  // a comment: a heartbeat
        let colon = line.firstIndex(of: 0x3A)
        let nameBytes = line[..<(colon ?? line.count)]
        var valueStart = colon.map { $0 + 1 } ?? line.count
        if valueStart < line.count, line[valueStart] == 0x20 { valueStart += 1 }
        let valueBytes = line[valueStart...]
        guard let name = String(validating: nameBytes, as: UTF8.self),
            let value = String(validating: valueBytes, as: UTF8.self)
        else {
            drop(APIError(.decodingFailed, "an event of the stream is not UTF-8; it was passed over"), &outputs)
            // This line has ended: the rest of the event follows it.
            dropping = .untilBlankLine
            return
        }
        switch name {
        case "event":
            eventType = value
        case "data":
            data.append(contentsOf: valueBytes)
            data.append(0x0A)
        case "id":
            if !value.utf8.contains(0) { lastEventID = value }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                // More digits than fit are a wait longer than anyone means: a day stands for it.
                let milliseconds = Int64(value).map { min($0, 86_400_000) } ?? 86_400_000
                outputs.append(.retry(.milliseconds(milliseconds)))
            }
        default:
            break
        }
    }

    private mutating func dispatch(_ outputs: inout [Output]) {
        defer {
            data = []
            eventType = nil
            eventSize = 0
        }
        let idChanged = lastEventID != lastEventIDAtDispatch
        lastEventIDAtDispatch = lastEventID
        guard !data.isEmpty else {
            if idChanged, let lastEventID { outputs.append(.lastEventID(lastEventID)) }
            return
        }
        data.removeLast()  // the line feed after the last data line
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        outputs.append(.event(ServerSentEvent(type: type, data: Data(data), id: lastEventID)))
    }
}
