public import Foundation

/// One event of a `text/event-stream` response, as the WHATWG EventSource specification
/// dispatches it.
///
/// ```
/// id: 42
/// event: updated
/// data: {"train": {"id": 1, "company": "MonoRail Co."}}
///
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event` field: `"message"` when the event named none.
    public var type: String
    /// The `data` fields, joined by line feeds: valid UTF-8.
    public var data: Data
    /// The stream's last event id when the event was dispatched: its own `id` field, or the latest
    /// earlier one; `nil` while the stream has sent none.
    public var id: String?

    /// Creates an event.
    public init(type: String = "message", data: Data, id: String? = nil) {
        self.type = type
        self.data = data
        self.id = id
    }

    /// ``data`` as text.
    public var text: String { String(decoding: data, as: UTF8.self) }
}
