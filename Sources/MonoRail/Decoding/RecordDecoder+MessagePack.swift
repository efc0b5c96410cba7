import Foundation

extension RecordDecoder {
    /// Decodes one record of a MessagePack body where it lies, without building its tree, and sets
    /// `end` to where it ends (``MessagePackRecord``); the record sits inside `depth` arrays and maps.
    ///
    /// Returns `nil` for a record only its tree decides, and throws when anything fails; the caller
    /// then decodes the record's JSON form with ``decode(_:at:allowsMissingID:)``, so the result, and
    /// the error a bad record raises, are exactly those of the same record in JSON.
    func decodeInPlace(_ record: PackedValue, at location: RecordLocation, depth: Int, end: inout Int) throws
        -> RecordPatch<Model>?
    {
        guard var source = MessagePackRecord(record, depth: depth, keys: keys) else { return nil }
        guard let patch = try read(&source, at: location) else { return nil }
        end = source.end
        return patch
    }
}
