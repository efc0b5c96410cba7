/// Where an ``Outbox`` keeps its writes: the storage seam of the write policy.
///
/// `SQLiteStorage` (module `MonoRailSQLite`) keeps them in its file beside the records, so they
/// survive a crash; ``InMemoryOutboxStorage`` keeps them for the life of the process. A store
/// whose ``MonoRail/Configuration/storage`` is also an `OutboxStorage` keeps its writes there;
/// any other store keeps them in memory.
///
/// Implementations must be safe to call from any task, and each call must be durable when it
/// returns: an outbox tells the app a write is kept only after ``enqueue(_:)`` returned.
public protocol OutboxStorage: AnyObject, Sendable {
    /// Every write kept, in ``PendingWrite/sequence`` order.
    ///
    /// Read at once, without suspending: the outbox reads it the first time the app asks what it
    /// holds (``Outbox/pendingCount`` at launch), which cannot wait.
    func pendingWrites() throws -> [PendingWrite]

    /// Keeps a write, with its sequence number, idempotency key and body.
    func enqueue(_ write: PendingWrite) async throws

    /// Settles writes the server answered: forgets `removed` and replaces `updated` (later writes
    /// whose local ids the server has replaced, or whose attempts grew) — in one transaction, where
    /// that means something, so that a restart finds either all of it or none.
    func settle(removing removed: [Int64], updating updated: [PendingWrite]) async throws
}
