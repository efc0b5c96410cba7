import Foundation

extension RecordDecoder {
    /// Decodes one record of a JSON body where it lies, without building its tree, and sets `end`
    /// to where it ends (``JSONTextRecord``).
    ///
    /// Returns `nil` for a record only its tree decides, and throws when anything fails; the caller
    /// then decodes the record's tree with ``decode(_:at:allowsMissingID:)``, so the result, and the
    /// error a bad record raises, are exactly those of the tree.
    func decodeInPlace(_ record: JSONTextValue, at location: RecordLocation, end: inout Int) throws
        -> RecordPatch<Model>?
    {
        guard var source = JSONTextRecord(record, keys: keys, coder: coder) else { return nil }
        if let unchanged = try unchanged(&source) {
            end = source.end
            return unchanged
        }
        guard let patch = try read(&source, at: location) else { return nil }
        end = source.end
        return patch
    }

    /// The patch of a record whose bytes are the ones its instance's server values were decoded
    /// from: found unchanged (``RecordPatch/isUnchanged``), with nothing decoded. `nil` unless that
    /// is known: the id must be the record's first member, as it usually is, and the instance live.
    private func unchanged(_ source: inout JSONTextRecord) throws -> RecordPatch<Model>? {
        guard comparesDigests, probes.shouldLook(), let leading = source.leadingID(),
            let id = ResourceID(json: leading), let (instance, removals) = lookUp(id)
        else { return nil }
        let taken = try source.digestWhole()
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
