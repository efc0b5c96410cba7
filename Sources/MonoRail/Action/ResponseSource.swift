/// Where a ``ResourceResponse``'s value came from.
public enum ResponseSource: Sendable, Hashable {
    /// A request answered by the server.
    case network
    /// The record cache answered without a request.
    case cache
    /// The server confirmed the cached records (`304 Not Modified`); the value is theirs, as fresh as
    /// a network answer.
    case revalidated
    /// The outbox kept the write to send later; the value is the instance as it is locally.
    case outbox
    /// Nothing was sent: a ``ResourceModel/save(uploadProgress:)`` of a record with no changes.
    /// The value is the instance as it is.
    case unchanged
}
