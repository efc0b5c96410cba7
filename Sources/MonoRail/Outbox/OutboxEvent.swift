/// What happened to a write in the ``Outbox``, for a UI that shows what is waiting.
///
/// ```swift
/// for await event in ResourceStore.default.outbox.events {
///     if case .rejected(let write, let error) = event { show(error, for: write) }
/// }
/// ```
public enum OutboxEvent: Sendable {
    /// The write was kept; the instance shows it already.
    case queued(PendingWrite)
    /// An attempt to send it began.
    case sent(PendingWrite)
    /// The server took it; the instance holds the server's answer.
    case confirmed(PendingWrite)
    /// The server refused it (or a write it depended on): the instance is back at the server's state
    /// and keeps the error in ``ResourceModel/errors`` and ``ResourceModel/rejection``.
    case rejected(PendingWrite, APIError)
    /// The server could not be reached; the write stays queued and is tried again after `delay`,
    /// or sooner when another request succeeds.
    case retrying(PendingWrite, APIError, after: Duration)
}
