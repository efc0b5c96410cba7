import Foundation
import MonoRailTransport
public import Observation

/// The writes a store keeps until the server confirms them: creates, saves and deletes made under
/// the ``WritePolicy/queued`` write policy, or while the server could not be reached under
/// ``WritePolicy/queuedWhenOffline``.
///
/// ```swift
/// MonoRail.configure {
///     $0.storage = try SQLiteStorage(path: path)     // the outbox lives in the same file
///     $0.writePolicy = .queued
/// }
/// train.company = "DB"
/// try await train.save()                             // applied locally, kept durably; returns at once
/// ResourceStore.default.outbox.pendingCount          // 1
/// try await ResourceStore.default.outbox.flush()     // sends what is kept, in order, exactly once
/// ```
///
/// **Exactly once.** Every write carries an `Idempotency-Key` made when it is kept, and every
/// attempt — after a lost answer, a `503`, or a restart — sends the same key and body, so a server
/// that honours the header (draft-ietf-httpapi-idempotency-key-header) applies it once. A write
/// leaves the outbox only when the server answered it. Storage notes each attempt before it is
/// sent and forgets each write the server took — a create or a delete at once, updates with the
/// next commit — so that after a crash a few updates the server took may be sent again, under
/// their keys.
///
/// **Order.** A record's writes are sent in the order they were made, one after the other, and so
/// is every chain of creates: a child's create after its parent's, a write naming a record created
/// in the outbox after that create. Writes on no common record or chain go out side by side, up to
/// ``OutboxLimits/concurrentWrites`` at once. A write waits while the server cannot be reached and
/// is tried again with backoff (`Retry-After` honoured), or as soon as another request succeeds.
///
/// **After a restart.** The writes an earlier launch kept are read from storage the first time the
/// app acts, awaits ``load()``, or reads what is pending (``pendingCount``: then off its thread, and
/// observably). ``flush()`` and ``load()`` put them back on live instances
/// and send them before the app has used their models — each write names its model's Swift type
/// (``PendingWrite/modelType``) — and merge and store the answers as an action's.
///
/// **Optimistic state.** A kept write shows on the live instance at once
/// (``ResourceModel/hasPendingChanges``, ``ResourceModel/pendingChanges``); the outbox holds the
/// instance until the server answers. A record created in the outbox gets a local id
/// (``ResourceID/isLocal``) that the server's id replaces everywhere when the create goes through:
/// in the identity map, in `@References` fields of instances with kept writes, and in later kept
/// writes, whose bodies are rewritten before they are sent.
///
/// **Parking.** A write the server refuses (a 4xx other than 404, 408, 409, 410, 425 and 429), or
/// keeps failing past ``MonoRail/Configuration/outboxLimits``, is *parked* (``parked``): kept, not
/// sent, and reported as ``OutboxEvent/parked(_:_:)``. Its instance looks as after the same refusal
/// of a direct write: the values the app gave stay, unsaved again (``ResourceModel/hasChanges``),
/// with the error in ``ResourceModel/rejection`` and ``ResourceModel/errors``. The writes that
/// depend on it — later writes of the same record, writes naming a record it creates — park with
/// it (``/MonoRailClient/APIError/Code/dependencyRejected``); every other write goes on. A parked write waits for
/// the app: saving the record again sends the parked write with the new values in its place,
/// ``retry(_:)`` sends it as it is, ``discard(_:)`` drops it and its dependents and rolls their
/// instances back. Parked writes are kept in storage like the others.
///
/// A `404` or `410` says the record is gone: the write and its dependents leave the outbox and the
/// instance is marked deleted (``OutboxEvent/rejected(_:_:)``); a kept delete of that record is done,
/// as it asked (``OutboxEvent/confirmed(_:)``).
///
/// **Signed out.** A `401` refuses the credentials, not the write: the write is kept and sending
/// stops (``OutboxEvent/waitingForToken(_:_:)``) until the configured
/// ``/MonoRailClient/Authentication`` has a token again — a refresh, or the app's
/// ``/MonoRailClient/Authentication/tokenDidChange()`` after sign-in — or a request goes through,
/// or the app calls ``flush()``.
public final class Outbox: Observable, Sendable, TokenObserver {
    /// A kept write with what the live instance needs: the instance, held until the server answers,
    /// and the edit numbers the write sends.
    struct Entry: Sendable {
        var write: PendingWrite
        var instance: (any ResourceModel)?
        var sent: [UInt64]
        /// Whether the storage holds it: only a kept write is sent.
        var isKept: Bool
        /// After a failed answer, not sent again before this.
        var notBefore: ContinuousClock.Instant?
        /// That failed answer.
        var failure: APIError?
        /// The attempts storage holds for it: a commit notes the attempts of the next few writes
        /// ahead of sending them, so that each is noted before it goes without a commit of its own.
        var noted: Int
        /// Whether it is being sent now.
        var isSending = false
        /// The order of the stamp it was kept at in this process; `Int64.min` for a write an
        /// earlier launch kept. A create's record cannot have come to the store before it.
        var keptAt = Int64.min
        /// Whether an attempt went with no answer (a lost answer, a process killed while it was
        /// out): the server may have applied it, and answers the next under the same key with its
        /// replay of that attempt, describing the record as it was then.
        var mayHaveApplied = false

        init(write: PendingWrite, instance: (any ResourceModel)?, sent: [UInt64], isKept: Bool) {
            self.write = write
            self.instance = instance
            self.sent = sent
            self.isKept = isKept
            noted = write.attempts
            // An earlier launch's: an attempt not answered with a failure (counted in `failures`) may
            // have been applied, its answer lost with the process.
            mayHaveApplied = write.attempts > write.failures
        }

        var isParked: Bool { write.parking != nil }
    }

    /// How one attempt ended.
    enum Outcome: Sendable {
        /// The server took it; a create's record has this id, and the answer this entity tag.
        case confirmed(ResourceID?, etag: String?)
        /// The server refused it.
        case rejected(APIError)
        /// No answer: try again after the delay, or the server's `Retry-After`.
        case unreachable(APIError, retryAfter: Duration?)
        /// The server wants credentials it did not get (`401`): the write waits for a token.
        case unauthorized(APIError)

        /// How a replay's span names it.
        var name: String {
            switch self {
            case .confirmed: "confirmed"
            case .rejected: "rejected"
            case .unreachable: "unreachable"
            case .unauthorized: "unauthorized"
            }
        }
    }

    /// How a replay run ended.
    enum RunResult: Sendable {
        /// Nothing left that can be sent.
        case drained
        /// The server could not be reached; writes are still kept.
        case stopped(APIError)
        /// Everything that could be sent was; writes the server answered with a failure wait for
        /// their next attempt.
        case waiting(APIError)
    }

    struct State: Sendable {
        weak var store: ResourceStore?
        var storage: (any OutboxStorage)?
        /// Whether the writes kept by earlier launches are read.
        var isOpen = false
        /// Whether a reader of what the outbox holds started reading them, off its thread.
        var isOpening = false
        /// How each write this launch kept ends, by sequence, for the app's action that kept it.
        var fates: [Int64: WriteFate] = [:]
        var entries: [Entry] = []
        var nextSequence: Int64 = 1
        /// Each model's putting back of its kept writes on live instances, by resource name.
        var restoring: [String: Task<Void, Never>] = [:]
        /// Whether sending waits for `flush()`.
        var isPaused = false
        /// Whether the server answered `401`: sending waits for a token (``tokenDidChange()``), a
        /// request that goes through, or `flush()`.
        var awaitsToken = false
        /// Calls of `flush()` waiting: a paused outbox still sends for them.
        var flushes = 0
        /// Local ids the server has replaced, and by what.
        var replaced: [String: ResourceID] = [:]
        /// How to send each restored model's writes, by resource name.
        var replays: [String: any OutboxReplaying] = [:]
        var run: Task<RunResult, Never>?
        /// What the run changed in memory and has not committed to storage yet.
        var unsettled = Unsettled()
        var retry: Task<Void, Never>?
        var retryDelay: Duration = .seconds(1)
        /// Whether the last run stopped because the server could not be reached; otherwise `retry`
        /// waits only for writes the server failed, and a new write need not wait with them.
        var isUnreachable = false

        /// Whether a new write goes now rather than with the scheduled retry: unless the server is
        /// known away, a write on its own record does not wait for another write's timer.
        var sendsNewWritesNow: Bool { retry == nil || !isUnreachable }
    }

    /// Writes the run confirmed (`removed`) or changed (`rewritten`) in memory since its last commit:
    /// committed with the next one — when a write's attempt is noted, a create or delete is
    /// confirmed, a write is parked or refused, or the run ends.
    struct Unsettled: Sendable {
        var removed: Set<Int64> = []
        var rewritten: Set<Int64> = []

        var isEmpty: Bool { removed.isEmpty && rewritten.isEmpty }

        mutating func formUnion(_ other: Unsettled) {
            removed.formUnion(other.removed)
            rewritten.formUnion(other.rewritten)
        }
    }

    /// How many writes one commit notes as attempted ahead of sending them. After a crash, at most
    /// this many updates the server already took are sent again under their keys.
    static let notedAhead = 16

    let state: Locked<State>
    let broadcaster = UpdateBroadcaster<OutboxEvent>()
    /// The store's, held strongly: the outbox holds its store weakly.
    let announcer: Announcer

    let registrar = ObservationRegistrar()

    init(store: ResourceStore) {
        state = Locked(State(store: store))
        announcer = store.announcer
    }
}
