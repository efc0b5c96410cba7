import MonoRailTransport

/// Keeps an outbox's writes in memory, for the life of the process: the outbox of every store
/// whose storage keeps none, and a stand-in for tests.
public final class InMemoryOutboxStorage: OutboxStorage {
    private let writes = Locked<[Int64: PendingWrite]>([:])

    /// Creates an empty storage.
    public init() {}

    /// Every write kept, in order.
    public func pendingWrites() throws -> [PendingWrite] {
        writes.withLock { $0.values.sorted { $0.sequence < $1.sequence } }
    }

    /// Keeps a write.
    public func enqueue(_ write: PendingWrite) async throws {
        writes.withLock { $0[write.sequence] = write }
    }

    /// Forgets and replaces writes, at once for every reader.
    public func settle(removing removed: [Int64], updating updated: [PendingWrite]) async throws {
        writes.withLock { writes in
            for sequence in removed { writes[sequence] = nil }
            for write in updated where writes[write.sequence] != nil { writes[write.sequence] = write }
        }
    }
}
