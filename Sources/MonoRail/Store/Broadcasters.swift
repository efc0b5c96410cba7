import MonoRailTransport

/// The per-model update streams of a store (`Train.updates()`), made on first use. Live queries
/// will subscribe here.
final class Broadcasters: Sendable {
    private let byModel = Locked<[ObjectIdentifier: any Sendable]>([:])

    /// The broadcaster of a model's updates.
    func broadcaster<Model: ResourceModel>(for type: Model.Type) -> UpdateBroadcaster<ResourceUpdate<Model>> {
        byModel.withLock { byModel in
            if let existing = byModel[ObjectIdentifier(type)] as? UpdateBroadcaster<ResourceUpdate<Model>> {
                return existing
            }
            let created = UpdateBroadcaster<ResourceUpdate<Model>>()
            byModel[ObjectIdentifier(type)] = created
            return created
        }
    }

    /// Whether anyone listens to a model's updates; makes no broadcaster.
    func hasSubscribers<Model: ResourceModel>(_ type: Model.Type) -> Bool {
        let existing = byModel.withLock { $0[ObjectIdentifier(type)] }
        return (existing as? UpdateBroadcaster<ResourceUpdate<Model>>)?.hasSubscribers ?? false
    }
}
