/// What happened to a write in the ``Outbox``, for a UI that shows what is waiting.
///
/// ```swift
/// for await event in ResourceStore.default.outbox.events {
///     if case .parked(let write, let error) = event { show(error, for: write) }
/// }
/// ```
public enum OutboxEvent: Sendable {
    /// The write was kept; the instance shows it already.
    case queued(PendingWrite)
    /// An attempt to send it began.
    case sent(PendingWrite)
    /// The server took it; the instance holds the server's answer.
    case confirmed(PendingWrite)
    /// The server has no such record (`404`, `410`), or the write named a record whose create was
    /// discarded: the write left the outbox, and the instance keeps the error in
    /// ``ResourceModel/rejection`` (a record gone is marked deleted).
    case rejected(PendingWrite, APIError)
    /// The server could not be reached, or answered with a failure; the write stays queued and is
    /// tried again after `delay` (or, unreached, sooner when another request succeeds).
    case retrying(PendingWrite, APIError, after: Duration)
    /// The server answered `401`: the write stays kept, and the outbox sends nothing until a token
    /// is to be had again (see ``Outbox``, "Signed out").
    case waitingForToken(PendingWrite, APIError)
    /// The outbox stopped sending the write (``Outbox/parked``): the server refused it, kept failing
    /// it past ``MonoRail/Configuration/outboxLimits``, or it depends on a parked write. The instance
    /// keeps its values, unsaved, with the error in ``ResourceModel/errors`` and
    /// ``ResourceModel/rejection``.
    case parked(PendingWrite, APIError)
    /// The app discarded the parked write, or one it depended on (``Outbox/discard(_:)``): it was
    /// never sent, and the instance is back at the server's state.
    case discarded(PendingWrite)
}
