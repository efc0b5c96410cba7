import Atomics
import MonoRailTransport

/// One change to a model instance, delivered by ``ResourceModel/updates`` and
/// ``ResourceModel/updates(in:)``.
public struct ResourceUpdate<Model: ResourceModel>: Sendable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// A response changed fields the app had not edited.
        case merged
        /// The app set a field.
        case edited
        /// ``ResourceModel/revert()`` discarded edits.
        case reverted
        /// The record is new to the store: created here (it received its id, or the outbox keeps its
        /// create), or first seen in a response.
        case created
        /// The record was deleted on the server.
        case deleted
        /// A relationship's members or target changed while the record did not: a car joined or
        /// left `train.cars`, the train `car.train` names arrived or left. `fields` names the
        /// relationship.
        case related
    }

    /// What happened.
    public let kind: Kind
    /// The Swift names of the fields whose values changed.
    public let fields: [String]
    /// The instance.
    public let instance: Model
}

/// Fans values out to any number of `AsyncStream`s; cheap to check when nobody listens.
final class UpdateBroadcaster<Element: Sendable>: Sendable {
    private struct Subscribers {
        var next = 0
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
    }
    private let subscribers = Locked(Subscribers())
    private let count = ManagedAtomic<Int>(0)

    var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    func stream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let key = subscribers.withLock { subscribers in
            subscribers.next += 1
            subscribers.continuations[subscribers.next] = continuation
            return subscribers.next
        }
        count.wrappingIncrement(ordering: .relaxed)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let removed = self.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
            if removed != nil { self.count.wrappingDecrement(ordering: .relaxed) }
        }
        return stream
    }

    func yield(_ element: Element) {
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(element) }
    }

    deinit {
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.finish() }
    }
}
