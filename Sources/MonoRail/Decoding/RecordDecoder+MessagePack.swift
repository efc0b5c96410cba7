import Foundation

extension RecordDecoder {
    /// Decodes one record of a MessagePack body where it lies, without building its tree, and sets
    /// `end` to where it ends.
    ///
    /// Each value is checked as the tree reader would check it before it is read
    /// (`MessagePackCursor.skipValue(maxDepth:checkingJSON:)`), with the nesting it sits at: the
    /// record is at `depth`.
    ///
    /// The in-place read covers the ordinary record: a map with string keys, each once, with an id.
    /// It returns `nil` for anything else and throws when a field fails; the caller then decodes the
    /// record's JSON form with ``decode(_:at:)``, so the result, and the error a bad record raises,
    /// are exactly those of the same record in JSON.
    func decodeInPlace(_ record: MessagePackField, at location: RecordLocation, depth: Int, end: inout Int) throws
        -> RecordPatch<Model>?
    {
        var cursor = record.cursor
        guard case .map(let count) = try cursor.header() else { return nil }
        // Which fields were seen, as bits; models of more than 64 fields take the tree.
        guard fields.count <= 64 else { return nil }
        var seen: UInt64 = 0
        var values = Model.FieldValues()
        var present = [Bool](repeating: false, count: fields.count)
        var embedded: [(index: Int, patch: any EmbeddedPatch)] = []
        var id: ResourceID?
        let direct = FieldDecoder(coder: coder)
        var expected = 0
        for _ in 0..<count {
            guard case .string(let length) = try cursor.header() else { return nil }
            let key = cursor.take(length)
            let value = MessagePackField(bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth)
            // Values sit one level below the record.
            try cursor.skipValue(maxDepth: record.maxDepth - depth - 1, checkingJSON: true)
            guard let index = fieldIndex(of: key, expected: expected) else {
                // Field keys are known text; any other key is checked as the tree reader would.
                guard String.isValidUTF8(key) else { return nil }
                if Self.equal(key, idKeyBytes) {
                    guard id == nil, let parsed = ResourceID(json: try value.json()) else { return nil }
                    id = parsed
                }
                continue
            }
            expected = index + 1
            guard seen & (1 << index) == 0 else { return nil }
            seen |= 1 << index
            present[index] = true
            // Generated code reads the plain fields; the schema entry, costly to copy, only the rest.
            if try values._$decodeField(index, from: value, with: direct) { continue }
            if let embedding = fields[index].embedded {
                let path = "\(location.description).\(wireKeys[index])"
                embedded.append((index, try embedding.decode(try value.json(), path, self.embedding)))
            } else {
                try fields[index].decode(&values, try value.json(), coder)
            }
        }
        guard let id else { return nil }
        for index in 0..<fields.count where seen & (1 << index) == 0 {
            if Model.shouldFail(withInvalidValue: nil, forProperty: fields[index].name) { return nil }
        }
        end = cursor.offset
        let wire: WireRecord? =
            embedding.keepsWire
            ? .packed(Data(UnsafeRawBufferPointer(rebasing: record.bytes[record.offset..<end]))) : nil
        return RecordPatch(id: id, values: values, present: present, embedded: embedded, wire: wire)
    }

    /// The schema field whose wire key is `key`; records usually list their keys in schema order,
    /// so the field after the last one found is tried first.
    func fieldIndex(of key: UnsafeRawBufferPointer, expected: Int) -> Int? {
        if expected < wireKeyBytes.count, Self.equal(key, wireKeyBytes[expected]) { return expected }
        for index in 0..<wireKeyBytes.count where index != expected && Self.equal(key, wireKeyBytes[index]) {
            return index
        }
        return nil
    }

    @inline(__always) static func equal(_ key: UnsafeRawBufferPointer, _ wanted: [UInt8]) -> Bool {
        guard key.count == wanted.count else { return false }
        return wanted.withUnsafeBytes { wanted in
            guard let lhs = key.baseAddress, let rhs = wanted.baseAddress else { return true }  // both empty
            return memcmp(lhs, rhs, key.count) == 0
        }
    }
}
