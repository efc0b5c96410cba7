public import Foundation
import Logging
import MonoRailTransport
public import Observation

/// A store's connection to the server's change stream: records other clients create, change and
/// delete are merged into every instance, list and cache as they happen, with no request of this
/// app's (SPEC §9).
///
/// ```swift
/// MonoRail.configure { $0.liveUpdates = .serverSentEvents(path: "/changes") }
/// try await ResourceStore.default.liveUpdates.connect()   // resumes from the last event id it merged
/// ResourceStore.default.liveUpdates.state                  // Observable: connecting, live, waiting, stopped
/// ResourceStore.default.liveUpdates.disconnect()
/// ```
///
/// - Each event is read as a response body of the store's conventions and merged through the action
///   pipeline: observers are told `created`, `merged` or `deleted` as for any merge, live queries
///   take records in and let them go, the record cache keeps them.
/// - Newer is decided by the record's version (``ServerConventions/versionKey``), never by arrival
///   order: a push older than what the store shows changes nothing, and a read that raced a push does
///   not undo it. Unsaved edits and kept writes stay on top of a pushed record, which becomes their
///   server base.
/// - Drops reconnect by themselves, after a wait that grows with each failure (with jitter), and
///   resume with `Last-Event-ID` from the last event merged, kept in the record cache with the
///   records it brought, so across restarts with `SQLiteStorage`. With no cursor the stream starts
///   from now. `event: reset` makes every held instance and live query read its records again.
/// - An event for a model the store does not know, an unknown event name, an event too large
///   (``MonoRail/Configuration/Limits/maxEventSize``) or one that does not decode is skipped and
///   reported (``lastError``, ``events``, a log notice), never merged in part; the stream goes on.
public final class LiveUpdates: Observable, Sendable {
    /// Where the connection stands.
    public enum State: Sendable {
        /// Opening the stream.
        case connecting
        /// Reading the stream: changes arrive as they happen.
        case live
        /// Waiting to open the stream again, after it failed or ended.
        case waiting(retryAt: Date)
        /// Not connected: never connected, disconnected, or stopped by an error retrying cannot fix.
        case stopped(APIError?)

        /// Whether the stream is being read.
        public var isLive: Bool {
            if case .live = self { return true }
            return false
        }
    }

    /// What happened on the connection, for an app that wants to know more than ``state``.
    public enum Event: Sendable {
        /// The stream opened.
        case connected
        /// Pushed records were merged or deleted, and kept: the event's kind, the model's name, the
        /// records' ids, and the event's `id`.
        case applied(PushedChangeKind, model: String, ids: [ResourceID], eventID: String?)
        /// The server said the cursor was too old: every held instance and live query was read again.
        case reset
        /// An event was skipped, or the connection failed: why.
        case problem(APIError)
    }

    struct Connection: Sendable {
        weak var store: ResourceStore?
        var state: State = .stopped(nil)
        var lastEventID: String?
        /// Whether ``lastEventID`` was read from the record cache, once per connection's life.
        var hasReadCursor = false
        var lastError: APIError?
        var task: Task<Void, Never>?
        /// Bumped by each connect and disconnect: a run that is not the current one stops.
        var generation = 0
        /// Callers of ``connect()`` waiting for the stream to be live, or for why it cannot be.
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter = 0
        /// The server's `retry` field.
        var serverRetry: Duration?
        /// Paused by the app going to the background; resumed when it returns.
        var isPaused = false
        /// The cursor at which an event could not be read, and how many times in a row: the stream
        /// is opened again from it, so the server sends again what followed, until that fails
        /// ``LiveUpdates/unreadableRetries`` times.
        var unreadable: (cursor: String?, count: Int)?
        /// Record events about a model this store has not used or registered yet, in order: applied
        /// when the app first uses it. Storage keeps no cursor past the first of them, so a restart
        /// has the server send them again.
        var held: [HeldEvent] = []
    }

    /// A record event kept until its model is known, with the cursor before it.
    struct HeldEvent: Sendable {
        var event: ServerSentEvent
        var kind: PushedChangeKind
        var model: String?
        /// The last event id before it: where a restarted stream must resume to get it again.
        var cursorBefore: String?
    }

    let connection: Locked<Connection>
    let registrar = ObservationRegistrar()
    let broadcaster = UpdateBroadcaster<Event>()
    let announcer: Announcer

    /// The app life-cycle observers, removed with the connection.
    let lifecycleObservers = Locked<[ObserverToken]>([])

    /// A notification observer's token.
    struct ObserverToken: @unchecked Sendable {
        // @unchecked: the token is never read or changed, only handed to `removeObserver`, which any
        // thread may call; it is kept in `lifecycleObservers`, behind its lock.
        let token: any NSObjectProtocol
    }

    init(store: ResourceStore) {
        connection = Locked(Connection(store: store))
        announcer = store.announcer
        observeAppLifecycle()
    }

    deinit {
        for observer in lifecycleObservers.withLock({ $0 }) {
            NotificationCenter.default.removeObserver(observer.token)
        }
    }

    /// Where the connection stands. Observable.
    public var state: State {
        registrar.access(self, keyPath: \.state)
        return connection.withLock { $0.state }
    }

    /// The id of the last event merged: where the stream resumes. Observable.
    public var lastEventID: String? {
        registrar.access(self, keyPath: \.lastEventID)
        return connection.withLock { $0.lastEventID }
    }

    /// Why the last event was skipped or the last attempt failed; `nil` until something went wrong.
    /// Observable.
    public var lastError: APIError? {
        registrar.access(self, keyPath: \.lastError)
        return connection.withLock { $0.lastError }
    }

    /// What happens on the connection from now on: streams opened, changes applied, resets,
    /// problems.
    public var events: AsyncStream<Event> { broadcaster.stream() }

    /// How long the stream may be silent before it is opened again:
    /// ``LiveUpdatesConfiguration/idleTimeout`` of the store's configuration.
    public var idleTimeout: Duration? {
        connection.withLock { $0.store }?.configuration.liveUpdates?.idleTimeout
    }

    // MARK: - Connecting

    /// Opens the stream, and returns once it is live; later drops reconnect by themselves.
    ///
    /// Waits through failures retrying may fix (no network, a `5xx`, a timeout), as ``state`` shows;
    /// cancel the calling task to stop waiting (the connection keeps trying until ``disconnect()``).
    /// Calling it while connected returns at once; after ``disconnect()`` it connects again.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` when retrying won't help:
    ///   ``/MonoRailClient/APIError/Code/invalidConfiguration`` with no
    ///   ``MonoRail/Configuration/liveUpdates`` or no API root, a `4xx` (``/MonoRailClient/APIError/Code/unauthorized``
    ///   once a token refresh failed), a response that is no event stream, a transport that cannot
    ///   stream; ``/MonoRailClient/APIError/Code/cancelled`` when the calling task is cancelled or
    ///   ``disconnect()`` is called first.
    public func connect() async throws {
        guard let store = connection.withLock({ $0.store }) else {
            throw APIError(.invalidConfiguration, "the store of these live updates is gone")
        }
        guard store.configuration.liveUpdates != nil else {
            throw APIError(
                .invalidConfiguration,
                "live updates are not configured; set MonoRail.Configuration.liveUpdates, e.g. "
                    + ".serverSentEvents(path: \"/changes\")")
        }
        if store.knowsNoModel {
            let message =
                "live updates connect before any model was used or registered: a pushed record of a model "
                + "this store does not know yet is skipped; register the models pushes carry "
                + "(MonoRail.Configuration.models)"
            store.noticeOnce("liveUpdates.models", "\(message)")
        }
        let key = connection.withLock { connection in
            connection.nextWaiter += 1
            return connection.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                let action: ConnectAction = connection.withLock { connection in
                    if case .live = connection.state { return .answer(nil) }
                    if Task.isCancelled { return .answer(APIError(.cancelled, "connecting was cancelled")) }
                    connection.waiters[key] = waiter
                    if connection.task != nil { return .wait }
                    connection.generation += 1
                    connection.isPaused = false
                    return .start(connection.generation)
                }
                switch action {
                case .answer(nil): waiter.resume()
                case .answer(let error?): waiter.resume(throwing: error)
                case .wait: break
                case .start(let generation): start(generation: generation)
                }
            }
        } onCancel: {
            // Only this call stops waiting; the connection goes on.
            let waiter = connection.withLock { $0.waiters.removeValue(forKey: key) }
            waiter?.resume(throwing: APIError(.cancelled, "connecting was cancelled"))
        }
    }

    private enum ConnectAction {
        case answer(APIError?)
        case wait
        case start(Int)
    }

    /// Closes the stream, as ``disconnect()`` does, and returns once nothing more will be merged or
    /// kept: before an app quits or hands its storage file to another process, so that what it
    /// kept last is what ``RecordCache/flush()`` then commits.
    ///
    /// ```swift
    /// await store.liveUpdates.close()
    /// try await storage.flush()
    /// ```
    public func close() async {
        let task = connection.withLock { $0.task }
        disconnect()
        await task?.value
    }

    /// Closes the stream and stops reconnecting; ``state`` becomes `.stopped(nil)`. The cursor is
    /// kept: ``connect()`` resumes from it. An event being merged as it is called may still be;
    /// ``close()`` waits for it.
    public func disconnect() {
        let (task, waiters) = connection.withLock { connection in
            connection.generation += 1
            defer {
                connection.task = nil
                connection.waiters = [:]
            }
            return (connection.task, Array(connection.waiters.values))
        }
        task?.cancel()
        setState(.stopped(nil))
        for waiter in waiters {
            waiter.resume(throwing: APIError(.cancelled, "disconnected before the stream was live"))
        }
    }

    func start(generation: Int) {
        let task = Task { [self] in await run(generation: generation) }
        connection.withLock { connection in
            if connection.generation == generation { connection.task = task }
        }
    }

    // MARK: - Telling

    /// Sets the state and tells its observers; on `.live` the waiting ``connect()`` calls return, on
    /// `.stopped` they throw.
    func setState(_ state: State, generation: Int? = nil) {
        let (isCurrent, waiters): (Bool, [CheckedContinuation<Void, any Error>]) = connection.withLock { connection in
            if let generation, generation != connection.generation { return (false, []) }
            connection.state = state
            switch state {
            case .live, .stopped:
                defer { connection.waiters = [:] }
                return (true, Array(connection.waiters.values))
            default:
                return (true, [])
            }
        }
        guard isCurrent else { return }
        switch state {
        case .live:
            for waiter in waiters { waiter.resume() }
            tell(.connected)
        case .stopped(let error):
            let failure = error ?? APIError(.cancelled, "disconnected before the stream was live")
            for waiter in waiters { waiter.resume(throwing: failure) }
        default:
            break
        }
        announcer.announce { [registrar] in
            registrar.willSet(self, keyPath: \.state)
            registrar.didSet(self, keyPath: \.state)
        }
    }

    /// Notes a problem: ``lastError``, the ``events`` streams and the log.
    func report(_ error: APIError, logger: Logger?) {
        connection.withLock { $0.lastError = error }
        logger?.notice("live updates: \(error.message)")
        tell(.problem(error))
        announcer.announce { [registrar] in
            registrar.willSet(self, keyPath: \.lastError)
            registrar.didSet(self, keyPath: \.lastError)
        }
    }

    /// Moves the cursor, and tells its observers.
    func setLastEventID(_ id: String) {
        let changed = connection.withLock { connection in
            defer { connection.lastEventID = id }
            return connection.lastEventID != id
        }
        guard changed else { return }
        announcer.announce { [registrar] in
            registrar.willSet(self, keyPath: \.lastEventID)
            registrar.didSet(self, keyPath: \.lastEventID)
        }
    }

    func tell(_ event: Event) {
        guard broadcaster.hasSubscribers else { return }
        announcer.announce { [broadcaster] in broadcaster.yield(event) }
    }

    /// Forgets the cursor (``ResourceStore/clear()``): the next connection starts from now.
    func forgetCursor() {
        connection.withLock {
            $0.lastEventID = nil
            $0.hasReadCursor = true
            // The last account's changes, kept for a model not used yet, go with it.
            $0.held = []
        }
    }
}
