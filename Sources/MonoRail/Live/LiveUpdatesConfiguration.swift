/// Where a store's live updates come from and how they are read: ``MonoRail/Configuration/liveUpdates``.
///
/// ```swift
/// MonoRail.configure { $0.liveUpdates = .serverSentEvents(path: "/changes") }
/// try await ResourceStore.default.liveUpdates.connect()
/// ```
///
/// The stream's events are read as `monorail serve` writes them at `GET /changes`:
///
/// ```
/// id: 42
/// event: updated                 (created | updated | destroyed | reset)
/// data: {"train": {"id": 1, "company": "MonoRail Co.", …}}
/// ```
///
/// The data is a response body of the store's conventions: its root names the model (`"train"`,
/// or `"trains"` for several records). Where bodies have no root (`.fastAPI`, `.bare`), the event
/// name says the model: `event: train.updated`. A destroy needs only the id.
public struct LiveUpdatesConfiguration: Sendable {
    /// The stream's path under the API root, or a full URL.
    public var path: String
    /// What each event name means. Default: `created`, `updated`, `destroyed` and `reset`, each
    /// also after a model name (`train.updated`); other names are skipped and reported.
    public var events: [String: PushedChangeKind]
    /// How long the stream may be silent — no event and no heartbeat comment — before the
    /// connection is taken for dead and opened again. Default 45 seconds.
    public var idleTimeout: Duration
    /// The first wait before reconnecting; the server's `retry` field replaces it. Each failed
    /// attempt in a row doubles it, up to ``maxReconnectDelay``, with jitter. Default 1 second.
    public var reconnectDelay: Duration
    /// The longest wait between attempts. Default 30 seconds.
    public var maxReconnectDelay: Duration
    /// Whether the stream closes while the app is in the background and resumes when it returns
    /// (on platforms with an app life cycle). Default `true`.
    public var pausesInBackground: Bool

    /// Server-Sent Events at `path`, read as the WHATWG EventSource specification reads them.
    ///
    /// - Parameter path: The stream's path under the API root, or a full URL. Default `/changes`.
    public static func serverSentEvents(path: String = "/changes") -> LiveUpdatesConfiguration {
        LiveUpdatesConfiguration(path: path)
    }

    private init(path: String) {
        self.path = path
        events = [
            "created": .created, "updated": .updated, "destroyed": .destroyed, "reset": .reset,
        ]
        idleTimeout = .seconds(45)
        reconnectDelay = .seconds(1)
        maxReconnectDelay = .seconds(30)
        pausesInBackground = true
    }

    /// The kind and model an event's name gives: `updated`, or `train.updated`.
    func kind(of eventName: String) -> (kind: PushedChangeKind, model: String?)? {
        if let kind = events[eventName] { return (kind, nil) }
        guard let dot = eventName.lastIndex(of: "."),
            let kind = events[String(eventName[eventName.index(after: dot)...])]
        else { return nil }
        let model = String(eventName[..<dot])
        return model.isEmpty ? nil : (kind, model)
    }
}

/// What a pushed event says happened.
public enum PushedChangeKind: String, Sendable, Hashable {
    /// A record was created: merged, and joins the live queries it matches.
    case created
    /// A record changed: merged as a read answered now.
    case updated
    /// A record was deleted: held instances are marked ``ResourceModel/isDeleted`` and leave every
    /// list.
    case destroyed
    /// The cursor the client resumed from is older than the changes the server keeps: every held
    /// instance and live query reads its records again, and the stream goes on from this event's id.
    case reset
}
