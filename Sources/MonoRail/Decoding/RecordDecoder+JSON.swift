import Foundation

extension RecordDecoder {
    /// Decodes one record of a JSON body where it lies, without building its tree, and sets `end`
    /// to where it ends.
    ///
    /// Every value is checked as the parser would check it (``JSONCursor/skipValue(depth:)``):
    /// by the field decoder that reads it, when that read all of it in place (it says where the value
    /// ends), or else by a check of its own. The in-place read covers the ordinary record: an object
    /// whose keys have no escapes, each once, with an id. It returns `nil` for anything else and
    /// throws when a field fails; the caller then decodes the record's tree with ``decode(_:at:)``,
    /// so the result, and the error a bad record raises, are exactly those of the tree.
    func decodeInPlace(_ record: JSONField, at location: RecordLocation, end: inout Int) throws
        -> RecordPatch<Model>?
    {
        var cursor = record.cursor
        guard cursor.current == UInt8(ascii: "{"), record.depth < record.maxDepth, var read = inPlaceRecord() else {
            return nil
        }
        // The digest, when looking for an unchanged record got as far as taking it.
        var digest: Int?
        if let unchanged = try unchanged(record, end: &end, digest: &digest) { return unchanged }
        cursor.offset += 1
        cursor.skipWhitespace()
        var values = Model.FieldValues()
        var more = cursor.current != UInt8(ascii: "}")
        if !more { cursor.offset += 1 }
        while more {
            guard cursor.current == UInt8(ascii: "\"") else { return nil }
            let keyStart = cursor.offset + 1
            // A key with escapes may spell a field's key differently: the tree decides.
            guard try !cursor.skipString() else { return nil }
            let key = UnsafeRawBufferPointer(
                UnsafeBufferPointer(rebasing: record.bytes[keyStart..<(cursor.offset - 1)]))
            cursor.skipWhitespace()
            guard cursor.current == UInt8(ascii: ":") else { return nil }
            cursor.offset += 1
            cursor.skipWhitespace()
            // A value must follow before any reader looks at it: the text may end here.
            guard cursor.current != nil else { return nil }
            // Values sit one level below the record.
            let value = JSONField(
                bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth, depth: record.depth + 1)
            coder.valueEnd = 0
            switch try member(key, of: &read, json: { try value.scalar()?.value ?? value.json() }) {
            case .refused: return nil
            case .other: break
            case .field(let index):
                // Generated code reads the plain fields; the schema entry, costly to copy, only the rest.
                if try !values._$decodeField(index, from: value, with: direct) {
                    try decodeBySchema(index, from: try value.json(), into: &values, of: &read, at: location)
                }
            }
            if coder.valueEnd > cursor.offset {
                cursor.offset = coder.valueEnd
            } else {
                try cursor.skipValue(depth: value.depth)
            }
            cursor.skipWhitespace()
            guard let next = cursor.continues(closing: UInt8(ascii: "}")) else { return nil }
            more = next
        }
        end = cursor.offset
        let bytes = UnsafeBufferPointer(rebasing: record.bytes[record.offset..<cursor.offset])
        let patch = patch(of: read, values: consume values) { .text(Data(bytes), keyOrder: storedKeyOrder) }
        if comparesDigests, read.isComplete(of: fieldCount) {
            patch?.digest = digest ?? RecordDigest.of(UnsafeRawBufferPointer(bytes))
        }
        return patch
    }

    /// The patch of a record whose bytes are the ones its instance's server values were decoded
    /// from: found unchanged (``RecordPatch/isUnchanged``), with nothing decoded. `nil` unless that
    /// is known: the id must be the record's first member, as it usually is, and the instance live.
    /// Sets `digest` once taken, so a record that changed is not digested twice.
    private func unchanged(_ record: JSONField, end: inout Int, digest: inout Int?) throws -> RecordPatch<Model>? {
        guard comparesDigests, probes.shouldLook() else { return nil }
        var cursor = record.cursor
        cursor.offset += 1
        cursor.skipWhitespace()
        guard cursor.current == UInt8(ascii: "\""), cursor.offset + 1 + idKeyBytes.count < record.bytes.count,
            record.bytes[cursor.offset + 1 + idKeyBytes.count] == UInt8(ascii: "\""),
            record.bytes[(cursor.offset + 1)...].starts(with: idKeyBytes)
        else { return nil }
        cursor.offset += idKeyBytes.count + 2
        cursor.skipWhitespace()
        guard cursor.current == UInt8(ascii: ":") else { return nil }
        cursor.offset += 1
        cursor.skipWhitespace()
        let field = JSONField(
            bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth, depth: record.depth + 1)
        guard let scalar = field.scalar()?.value, let id = ResourceID(json: scalar),
            let (instance, removals) = lookUp(id)
        else { return nil }
        var whole = record.cursor
        try whole.skipValue(depth: record.depth)
        let bytes = UnsafeBufferPointer(rebasing: record.bytes[record.offset..<whole.offset])
        let taken = RecordDigest.of(UnsafeRawBufferPointer(bytes))
        digest = taken
        let state = instance._$state
        guard state.hasServerDigest(taken) else {
            probes.looked(found: false)
            return nil
        }
        probes.looked(found: true)
        end = whole.offset
        // No values, not even a copy of the instance's: copying them retained each of their
        // strings and arrays, scattered over the heap, and releasing the copy touched them again.
        let patch = patchType.init(
            id: id, values: Model.FieldValues(), present: allPresent, embedded: [],
            wire: embedding.keepsWire ? .text(Data(bytes), keyOrder: storedKeyOrder) : nil)
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
