/// How a store's creates, saves and deletes reach the server.
///
/// ```swift
/// MonoRail.configure { $0.writePolicy = .queued }
/// try await train.save()                               // applied locally at once, queued durably
/// ResourceStore.default.outbox.pendingCount            // 1 until the server confirms it
/// ```
///
/// Writes kept in the ``Outbox`` are applied to the live instance at once (its
/// ``ResourceModel/hasPendingChanges``), kept with an `Idempotency-Key` and their order, and sent
/// in order, each exactly once, when the server can be reached. A write with a file to upload is
/// always sent at once.
///
/// **What is kept.** A queued policy keeps writes in the store's storage, which must keep them
/// across a restart (an ``OutboxStorage``: `SQLiteStorage` keeps them in its file, beside the
/// records). With storage that cannot — the default ``InMemoryRecordCache``, or none — the first
/// write throws ``/MonoRailClient/APIError/Code/invalidConfiguration`` (and the store logs it when configured),
/// unless ``MonoRail/Configuration/allowsQueuedWritesLostOnQuit`` keeps them in memory, lost when
/// the app quits.
public enum WritePolicy: Sendable, Hashable {
    /// Sent when made; a write that cannot reach the server fails. The default.
    case direct
    /// Sent when made, with an `Idempotency-Key`, in one attempt that waits at most
    /// ``MonoRail/Configuration/offlineDeadline``; a write that cannot reach the server (a transport
    /// failure, 408, 429, 502, 503 or 504, or no answer by the deadline) is kept in the outbox instead
    /// of failing, and the outbox sends it again under the same key. A write made while the store is
    /// known offline (``ResourceStore/isOffline``) is kept at once, and so is every write made while
    /// the outbox holds others, to keep their order.
    case queuedWhenOffline
    /// Always kept in the outbox first and sent in the background: the action returns as soon as
    /// the write is applied locally and kept.
    case queued
}
