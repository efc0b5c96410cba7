import Atomics
import MonoRailTransport

/// Who is told of changes to a store's instances beyond their own observers: the per-model update
/// streams (`Train.updates()`) and the live queries, each made on first use.
final class Broadcasters: Sendable {
    private let byModel = Locked<[ObjectIdentifier: any Sendable]>([:])
    private let queriesByModel = Locked<[ObjectIdentifier: any QueryRegistry]>([:])
    /// Live queries in the store, of every model: while there are none, merges hold no changes back.
    private let liveQueryCount = ManagedAtomic<Int>(0)

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

    /// Whether anyone — an update stream or a live query — listens to a model's changes; makes
    /// nothing.
    func hasSubscribers<Model: ResourceModel>(_ type: Model.Type) -> Bool {
        if liveQueryCount.load(ordering: .relaxed) > 0, queries(of: type) != nil { return true }
        let existing = byModel.withLock { $0[ObjectIdentifier(type)] }
        return (existing as? UpdateBroadcaster<ResourceUpdate<Model>>)?.hasSubscribers ?? false
    }

    /// Whether the store has live queries of any model.
    var hasLiveQueries: Bool { liveQueryCount.load(ordering: .relaxed) > 0 }

    /// The live queries of a model, if it has any.
    func queries(of type: any ResourceModel.Type) -> (any QueryRegistry)? {
        guard liveQueryCount.load(ordering: .relaxed) > 0 else { return nil }
        return queriesByModel.withLock { $0[ObjectIdentifier(type)] }
    }

    /// The live queries of every model.
    func allQueries() -> [any QueryRegistry] {
        queriesByModel.withLock { Array($0.values) }
    }

    /// Starts telling a live query of changes.
    func add<Model: ResourceModel>(_ query: ResourceQuery<Model>) {
        let queries = queriesByModel.withLock { byModel in
            if let existing = byModel[ObjectIdentifier(Model.self)] as? ModelQueries<Model> { return existing }
            let made = ModelQueries<Model>()
            byModel[ObjectIdentifier(Model.self)] = made
            return made
        }
        queries.add(query)
        liveQueryCount.wrappingIncrement(ordering: .relaxed)
    }

    /// Stops telling a live query, as it goes away.
    func remove<Model: ResourceModel>(_ identifier: ObjectIdentifier, of type: Model.Type) {
        let queries = queriesByModel.withLock { $0[ObjectIdentifier(type)] as? ModelQueries<Model> }
        queries?.remove(identifier)
        liveQueryCount.wrappingDecrement(ordering: .relaxed)
    }
}
