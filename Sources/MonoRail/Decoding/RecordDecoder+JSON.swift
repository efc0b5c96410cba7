import Foundation

extension RecordDecoder {
    /// Decodes one record of a JSON body where it lies, without building its tree, and sets `end`
    /// to where it ends. The record is inside `depth` arrays and objects.
    ///
    /// Each value is checked as the parser would check it (``JSONCursor/skipValue(depth:)``) before
    /// it is read. The in-place read covers the ordinary record: an object whose keys have no
    /// escapes, each once, with an id. It returns `nil` for anything else and throws when a field
    /// fails; the caller then decodes the record's tree with ``decode(_:at:)``, so the result, and
    /// the error a bad record raises, are exactly those of the tree.
    func decodeInPlace(_ record: JSONField, at location: RecordLocation, depth: Int, end: inout Int) throws
        -> RecordPatch<Model>?
    {
        var cursor = record.cursor
        // Which fields were seen, as bits; models of more than 64 fields take the tree.
        guard cursor.current == UInt8(ascii: "{"), depth < record.maxDepth, fields.count <= 64 else { return nil }
        cursor.offset += 1
        cursor.skipWhitespace()
        var seen: UInt64 = 0
        var values = Model.FieldValues()
        var present = [Bool](repeating: false, count: fields.count)
        var embedded: [(index: Int, patch: any EmbeddedPatch)] = []
        var id: ResourceID?
        let direct = FieldDecoder(coder: coder)
        var expected = 0
        var closed = cursor.current == UInt8(ascii: "}")
        while !closed {
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
            let value = JSONField(bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth)
            // Values sit one level below the record.
            try cursor.skipValue(depth: depth + 1)
            cursor.skipWhitespace()
            switch cursor.current {
            case UInt8(ascii: ","):
                cursor.offset += 1
                cursor.skipWhitespace()
            case UInt8(ascii: "}"):
                closed = true
            default:
                return nil
            }
            guard let index = fieldIndex(of: key, expected: expected) else {
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
        cursor.offset += 1
        guard let id else { return nil }
        for index in 0..<fields.count where seen & (1 << index) == 0 {
            if Model.shouldFail(withInvalidValue: nil, forProperty: fields[index].name) { return nil }
        }
        end = cursor.offset
        let wire: WireRecord? =
            embedding.keepsWire
            ? .text(Data(UnsafeBufferPointer(rebasing: record.bytes[record.offset..<end])), keyOrder: storedKeyOrder)
            : nil
        return RecordPatch(id: id, values: values, present: present, embedded: embedded, wire: wire)
    }
}
