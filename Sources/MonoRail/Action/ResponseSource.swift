/// Where a ``ResourceResponse``'s value came from.
public enum ResponseSource: Sendable, Hashable {
    /// A request answered by the server.
    case network
    /// A record cache answered without a request.
    case cache
    /// The outbox kept the write to send later; the value is the instance as it is locally.
    case outbox
}
