import Foundation

/// Merges decoded records into a store's identity map: checks a response's patches (ids that
/// changed type, a target that would take another instance's id) and applies them, all or none.
///
/// Both steps run under the store's identity-map lock, embedded and side-loaded records included,
/// so no reader sees half a response. Notifications are collected, not sent: the store sends them
/// once the lock is released.
enum Merger {
    /// Thrown by ``check(_:target:mode:in:)`` when a record found unchanged
    /// (``RecordPatch/isUnchanged``) no longer describes its instance, which another merge changed
    /// since, or when the instance is gone: nothing is merged, and the response must be read again
    /// in full (``ActionPipeline/readingAgainIfExpired(_:)``).
    struct ProbeExpired: Error {}

    /// What ``check(_:target:mode:in:)`` found, so the merge need not look it up again.
    struct Found<Model: ResourceModel> {
        /// The live instance for each patch, if any.
        var instances: [Model?] = []
        /// The identity map's ``IdentityMap/insertions`` after the check, when a patch found
        /// without an instance is sure to have none at the merge while that count stands: no
        /// other patch has its id (the ids rose), so only an entry made since could.
        var insertions: Int?
    }

    /// The checks of a merge, embedded records included.
    ///
    /// - Returns: What was found, so the merge need not look it up again.
    @discardableResult
    static func check<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], target: Model?, mode: InstanceState<Model>.MergeMode = .read,
        in map: inout IdentityMap
    ) throws -> Found<Model> {
        let type = ObjectIdentifier(Model.self)
        // A record found unchanged stands for the values of a read; a write's answer is decoded.
        let reads: Bool = if case .read = mode { true } else { false }
        var found: [Model?] = []
        found.reserveCapacity(patches.count)
        var rising = RisingIDs()
        for patch in patches {
            rising.note(patch.id)
            for nested in patch.embedded { try nested.patch.check(in: &map) }
            // Found by the reader under this id, of this type, and nothing removed since: the
            // merge takes it from the patch.
            if patch.known != nil {
                if patch.knownRemovals == map.removals, target == nil {
                    if let state = patch.unchanged {
                        guard reads, let digest = patch.digest, state.hasServerDigest(digest) else {
                            throw ProbeExpired()
                        }
                    }
                    found.append(nil)
                    continue
                }
                patch.known = nil
            }
            guard let id = patch.id, let entry = map.lookup(IdentityMap.Key(type: type, id: id)),
                let object = entry.object as? Model
            else {
                if patch.isUnchanged { throw ProbeExpired() }
                found.append(nil)
                continue
            }
            if let state = patch.unchanged {
                guard reads, object._$state === state, let digest = patch.digest, state.hasServerDigest(digest) else {
                    throw ProbeExpired()
                }
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
        return Found(instances: found, insertions: rising.hold ? map.insertions : nil)
    }

    /// The changes of a merge, once every check passed.
    static func apply<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], found: Found<Model> = Found(), target: Model?,
        mode: InstanceState<Model>.MergeMode,
        store: ResourceStore, map: inout IdentityMap, coder: FieldCoder, fetched: FetchStamp,
        announcements: inout [() -> Void]
    ) -> [Model] {
        let type = ObjectIdentifier(Model.self)
        let schema = Model.resourceSchema
        let fields = schema.fields
        let hasReferences = schema.hasReferences
        let perTypeListening = store.broadcasters.hasSubscribers(Model.self)
        let isRelated =
            store.relationshipIndex.indexes(Model.self) || store.relationshipObservers.isReferred(Model.self)
        var instances: [Model] = []
        instances.reserveCapacity(patches.count)
        map.reserve(patches.count)
        let checked = found.instances
        // The map's insertions while the check's absences stand: the check's, then each of ours.
        var certainAt = found.insertions
        for position in patches.indices {
            let patch = patches[position]
            let fetched = patch.fetched ?? fetched
            for nested in patch.embedded {
                // The answer to a save of nested attributes: its new records are the app's new children.
                if let target, case .saved = mode, let embedding = fields[nested.index].embedded,
                    Model.nestedAttributes.contains(fields[nested.index].name)
                {
                    let sent = target._$state.state.withLock { $0.values }
                    nested.patch.adopt(
                        unsaved: embedding.unsaved(sent), in: &map, store: store, announcements: &announcements)
                }
                let children = nested.patch.apply(
                    in: &map, store: store, coder: coder, fetched: fetched, announcements: &announcements)
                fields[nested.index].embedded?.assign(&patch.values, children)
            }
            let instance: Model
            var entering: IdentityMap.Key?
            if let id = patch.id {
                let key = IdentityMap.Key(type: type, id: id)
                let isCertain = certainAt == map.insertions
                if let existing = patch.known.take() ?? (position < checked.count ? checked[position] : nil)
                    ?? (isCertain ? nil : map.lookup(key)?.object as? Model)
                {
                    instance = existing
                } else {
                    instance = target ?? Model()
                    entering = key
                }
            } else if let target {
                // A write answered without an id describes the instance sent, which keeps its id, if
                // any, and its place in the identity map.
                instance = target
            } else {
                // The decoder allows no id only where there is a target.
                continue
            }
            let isNew = entering != nil
            // An instance made here has no observers yet; only a per-model stream could be listening.
            let isUnobserved = isNew && target == nil && !perTypeListening
            let changed = instance._$state.apply(
                patch, mode: mode, store: store, coder: coder, fields: fields, fetched: fetched,
                comparesFields: !isUnobserved || hasReferences)
            // Entered late, and the instance appended last: once the map holds a weak reference,
            // each retain and release of the instance takes the runtime's slow path (an atomic
            // on its side table), which cost more than the rest of this loop.
            if let entering, let id = patch.id {
                let isCertain = certainAt == map.insertions
                map.insert(instance, for: entering, id: id)
                if isCertain { certainAt = map.insertions }
            }
            if isUnobserved {
                // Nobody observes it, but the index must know it before the merge returns, and the
                // relationships it joins are told.
                if isRelated {
                    announcements.append { store.noteRelationships(of: instance, kind: .created, fields: []) }
                }
            } else if !changed.isEmpty || isNew {
                // A record first seen is new to the store's observers, wherever it came from.
                let kind: ResourceUpdate<Model>.Kind = isNew ? .created : .merged
                announcements.append {
                    if isNew { instance._$state.announceIdentity(of: instance) }
                    instance._$state.announce(kind, fields: changed, of: instance)
                }
            }
            instances.append(consume instance)
        }
        return instances
    }
}
