import Foundation

extension RecordDecoder {
    /// Reads one record in place: first, when the record's bytes are the ones its live instance
    /// was merged from, as unchanged; else member by member, by the one field loop. Returns `nil`,
    /// or throws, when only the record's tree decides. Inlined where the source's type is known, so
    /// the loop is compiled for each backing.
    @inline(__always)
    func readInPlace(_ source: inout some RecordSource, at location: RecordLocation) throws -> RecordPatch<Model>? {
        if let unchanged = try unchanged(&source) { return unchanged }
        return try read(&source, at: location)
    }

    /// The patch of a record whose bytes are the ones its instance's server values were decoded
    /// from: found unchanged (``RecordPatch/isUnchanged``), with nothing decoded. `nil` unless that
    /// is known: the id must be the record's first member, as it usually is, and the instance live.
    @inline(__always)
    private func unchanged(_ source: inout some RecordSource) throws -> RecordPatch<Model>? {
        guard comparesDigests, probes.shouldLook(), let leading = source.leadingID(),
            let id = ResourceID(json: leading), let (instance, removals) = lookUp(id),
            let taken = try source.digestWhole()
        else { return nil }
        let state = instance._$state
        guard state.hasServerDigest(taken) else {
            probes.looked(found: false)
            return nil
        }
        probes.looked(found: true)
        // No values, not even a copy of the instance's: copying them retained each of their
        // strings and arrays, scattered over the heap, and releasing the copy touched them again.
        let patch = patchType.init(
            id: id, values: Model.FieldValues(), present: allPresent, embedded: [],
            wire: embedding.keepsWire ? source.wire(keyOrder: storedKeyOrder) : nil)
        patch.digest = taken
        patch.known = instance
        patch.knownRemovals = removals
        patch.unchanged = state
        return patch
    }

    /// The live instance of the record with `id` and the identity map's removal count, its
    /// look-up counted in ``probes``. `nil` also when the instance was stored under the id in
    /// another type (`1` and `"1"`): the merge reports that.
    private func lookUp(_ id: ResourceID) -> (Model, Int)? {
        guard let found = embedding.store.liveInstance(IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id)),
            found.id == id, let instance = found.object as? Model
        else {
            probes.looked(found: false)
            return nil
        }
        return (instance, found.removals)
    }
}
