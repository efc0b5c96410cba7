/// Where an outbox plugs into the action pipeline: every write (create, save, delete) is handed to
/// it, and it sends the write now or keeps it to send later.
///
/// The store's outbox is ``MonoRail/Configuration/outbox``; the default, ``DirectOutbox``, sends
/// every write at once.
public protocol Outbox: Sendable {
    /// Sends `write` with `send` now, returning the response, or keeps it for later and returns
    /// `nil`; the action then returns the instance as it is locally.
    func submit(_ write: ActionDescription, send: @Sendable () async throws -> APIResponse) async throws
        -> APIResponse?
    /// The number of writes kept and not yet confirmed by the server.
    var pendingCount: Int { get }
    /// Sends what is kept, in order.
    func flush() async throws
}

/// The outbox that keeps nothing: every write is sent when it is made, and fails when it cannot be.
public struct DirectOutbox: Outbox {
    /// Creates the outbox.
    public init() {}

    /// Sends the write at once.
    public func submit(_ write: ActionDescription, send: @Sendable () async throws -> APIResponse) async throws
        -> APIResponse?
    {
        try await send()
    }

    /// Always 0.
    public var pendingCount: Int { 0 }

    /// Does nothing: nothing is kept.
    public func flush() async throws {}
}
