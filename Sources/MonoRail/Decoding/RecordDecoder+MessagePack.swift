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
        guard case .map(let count) = try cursor.header(), var read = inPlaceRecord() else { return nil }
        var values = Model.FieldValues()
        for _ in 0..<count {
            guard case .string(let length) = try cursor.header() else { return nil }
            let key = cursor.take(length)
            // Keys are checked as the tree reader would (field keys are known text, so this is for
            // the others).
            guard String.isValidUTF8(key) else { return nil }
            let value = MessagePackField(bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth)
            // Values sit one level below the record.
            try cursor.skipValue(maxDepth: record.maxDepth - depth - 1, checkingJSON: true)
            switch try member(key, of: &read, json: value.json) {
            case .refused: return nil
            case .other: continue
            case .field(let index):
                // Generated code reads the plain fields; the schema entry, costly to copy, only the rest.
                if try values._$decodeField(index, from: value, with: direct) { continue }
                try decodeBySchema(index, from: try value.json(), into: &values, of: &read, at: location)
            }
        }
        end = cursor.offset
        return patch(of: read, values: consume values) {
            .packed(Data(UnsafeRawBufferPointer(rebasing: record.bytes[record.offset..<cursor.offset])))
        }
    }
}
