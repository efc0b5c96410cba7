/// How long the ``Outbox`` keeps sending a write the server answers with failures before it parks
/// it (``Outbox/parked``) and lets the writes behind it go: ``MonoRail/Configuration/outboxLimits``.
///
/// Only answers count. A server that cannot be reached — no connection, a timeout, a connection
/// lost — parks nothing: the outbox exists to wait for it.
///
/// ```swift
/// MonoRail.configure { $0.outboxLimits = OutboxLimits(maximumFailures: 5, maximumAge: .seconds(3_600)) }
/// ```
///
/// They also bound how many writes are sent at once (``concurrentWrites``).
public struct OutboxLimits: Sendable, Hashable {
    /// The failed answers after which a write is parked. Default 10: with the outbox's backoff
    /// (1 s doubling to a minute, or the server's `Retry-After`), about six minutes of a failing server.
    public var maximumFailures: Int
    /// The age past which a write is parked at its next failed answer. Default a day.
    public var maximumAge: Duration
    /// The most writes sent at once. Writes that depend on no write being sent — another record,
    /// no local id of a record still being created — go out side by side; a record's writes, and
    /// a chain of creates, are sent one after the other whatever this says. Default 4; 1 sends one
    /// write at a time.
    public var concurrentWrites: Int

    /// Creates limits; `maximumFailures` and `concurrentWrites` are at least 1.
    public init(maximumFailures: Int = 10, maximumAge: Duration = .seconds(86_400), concurrentWrites: Int = 4) {
        self.maximumFailures = max(1, maximumFailures)
        self.maximumAge = max(.zero, maximumAge)
        self.concurrentWrites = max(1, concurrentWrites)
    }
}
