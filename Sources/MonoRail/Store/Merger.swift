import Foundation

/// Merges decoded records into a store's identity map: checks a response's patches (ids that
/// changed type, a target that would take another instance's id) and applies them, all or none.
///
/// Both steps run under the store's identity-map lock, embedded and side-loaded records included,
/// so no reader sees half a response. Notifications are collected, not sent: the store sends them
/// once the lock is released.
enum Merger {
    /// The checks of a merge, embedded records included.
    ///
    /// - Returns: The live instance for each patch, if any, so the merge need not look them up again.
    @discardableResult
    static func check<Model: ResourceModel>(_ patches: [RecordPatch<Model>], target: Model?, in map: inout IdentityMap)
        throws
        -> [Model?]
    {
        let type = ObjectIdentifier(Model.self)
        var found: [Model?] = []
        found.reserveCapacity(patches.count)
        for patch in patches {
            for nested in patch.embedded { try nested.patch.check(in: &map) }
            // Found by the reader under this id, of this type, and nothing removed since.
            if let known = patch.known, known.removals == map.removals, target == nil {
                found.append(known.instance)
                continue
            }
            guard let id = patch.id, let entry = map.lookup(IdentityMap.Key(type: type, id: id)),
                let object = entry.object as? Model
            else {
                found.append(nil)
                continue
            }
            found.append(object)
            if entry.id != id {
                throw APIError(
                    .inconsistentResponse,
                    "\(Model.resourceSchema.typeName) \(entry.id.debugText) came back as \(id.debugText): "
                        + "the id changed type")
            }
            if let target, object !== target {
                throw APIError(
                    .inconsistentResponse,
                    "another live \(Model.resourceSchema.typeName) already has id \(id.debugText)")
            }
        }
        return found
    }

    /// The changes of a merge, once every check passed.
    static func apply<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], found: [Model?] = [], target: Model?, mode: InstanceState<Model>.MergeMode,
        store: ResourceStore, map: inout IdentityMap, coder: FieldCoder, fetchedAt: Date,
        announcements: inout [() -> Void]
    ) -> [Model] {
        let type = ObjectIdentifier(Model.self)
        let fields = Model.resourceSchema.fields
        let hasReferences = fields.contains { $0.isReference }
        let perTypeListening = store.broadcasters.hasSubscribers(Model.self)
        let isIndexed = store.relationshipIndex.indexes(Model.self)
        var instances: [Model] = []
        instances.reserveCapacity(patches.count)
        map.reserve(patches.count)
        for position in patches.indices {
            let patch = patches[position]
            let fetchedAt = patch.fetchedAt ?? fetchedAt
            for nested in patch.embedded {
                let children = nested.patch.apply(
                    in: &map, store: store, coder: coder, fetchedAt: fetchedAt, announcements: &announcements)
                fields[nested.index].embedded?.assign(&patch.values, children)
            }
            let instance: Model
            let isNew: Bool
            if let id = patch.id {
                let key = IdentityMap.Key(type: type, id: id)
                if let existing = (position < found.count ? found[position] : nil)
                    ?? map.lookup(key)?.object as? Model
                {
                    instance = existing
                    isNew = false
                } else {
                    instance = target ?? Model()
                    isNew = true
                    map.insert(instance, for: key, id: id)
                }
            } else if let target {
                // A write answered without an id describes the instance sent, which keeps its id, if
                // any, and its place in the identity map.
                instance = target
                isNew = false
            } else {
                // The decoder allows no id only where there is a target.
                continue
            }
            // An instance made here has no observers yet; only a per-model stream could be listening.
            let isUnobserved = isNew && target == nil && !perTypeListening
            let changed = instance._$state.apply(
                patch, mode: mode, store: store, coder: coder, fields: fields, fetchedAt: fetchedAt,
                comparesFields: !isUnobserved || hasReferences)
            instances.append(instance)
            if isUnobserved {
                // Nobody is told of it, so the index must be, before the merge returns.
                if isIndexed { announcements.append { store.relationshipIndex.note(instance, fields: nil, in: store) } }
                continue
            }
            if !changed.isEmpty || isNew {
                // A record first seen is new to the store's observers, wherever it came from.
                let kind: ResourceUpdate<Model>.Kind = isNew ? .created : .merged
                announcements.append {
                    if isNew { instance._$state.announceIdentity(of: instance) }
                    instance._$state.announce(kind, fields: changed, of: instance)
                }
            }
        }
        return instances
    }
}
