import Atomics

/// Where and in what order a store tells the app of changes (stage 8 of the pipeline): Observation
/// of instances, relationships and live queries, the update streams, the outbox's events and the
/// `success:`/`failure:` callbacks. ``MonoRail/Configuration/delivery`` chooses.
///
/// With ``Delivery/immediate`` each is told at once, on the task that made the change. With
/// ``Delivery/mainActor`` each is queued, in the order the changes were made, for one task on the
/// main actor; the store's state is already changed when they run, so an observer reads the new
/// values. An action waits for the queue to drain before it returns (``settle()``), so code on the
/// main actor that awaited `save()` sees every observer told.
final class Announcer: Sendable {
    typealias Announcement = @Sendable () -> Void

    private let onMainActor = ManagedAtomic<Bool>(false)
    /// The queue of the main-actor task, made when ``Delivery/mainActor`` is first configured.
    private let queue = Locked<AsyncStream<Announcement>.Continuation?>(nil)

    init(_ delivery: Delivery) {
        set(delivery)
    }

    /// Whether announcements run where the change was made; the hot path checks this before it
    /// makes a closure.
    var isImmediate: Bool { !onMainActor.load(ordering: .relaxed) }

    /// Follows a new configuration.
    func set(_ delivery: Delivery) {
        onMainActor.store(delivery == .mainActor, ordering: .relaxed)
    }

    /// Runs `announcement` now, or queues it for the main actor behind every earlier one.
    func announce(_ announcement: @escaping Announcement) {
        guard !isImmediate else { return announcement() }
        enqueue(announcement)
    }

    /// Queues `announcement` for the main actor, whatever the delivery: callbacks asked for there.
    func enqueue(_ announcement: @escaping Announcement) {
        let continuation = queue.withLock { queue in
            if let queue { return queue }
            let (stream, made) = AsyncStream<Announcement>.makeStream()
            // One task, so announcements keep their order; it ends when the store goes.
            Task { @MainActor in
                for await announcement in stream { announcement() }
            }
            queue = made
            return made
        }
        continuation.yield(announcement)
    }

    /// Whether actions wait for the main actor to announce; off in the blocking variants, whose
    /// caller may be the main thread itself, blocked until the action returns.
    @TaskLocal static var settles = true

    /// Returns once every announcement queued so far has run; at once with ``Delivery/immediate``.
    func settle() async {
        guard !isImmediate, Self.settles else { return }
        await withCheckedContinuation { (settled: CheckedContinuation<Void, Never>) in
            enqueue { settled.resume() }
        }
    }

    deinit {
        queue.withLock { $0?.finish() }
    }
}
