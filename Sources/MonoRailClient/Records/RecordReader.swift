/// What reads one model's records for ``InPlaceBody`` and keeps them: in place from a
/// ``RecordSource``, or from a record's tree when in place will not do. The model layer's record
/// collector is the one reader.
///
/// One requirement per backing, each taking the record's whole value: a record costs one call into
/// the model layer, where a reader's loop is compiled for that backing, instead of several calls
/// through code generic over the records it keeps (each of which looked up type metadata).
package protocol RecordReader: AnyObject {
    /// Reads the JSON text record at `record` and keeps it; returns where it ends.
    ///
    /// - Parameters:
    ///   - path: Where the record or its list sits, for errors: `$.trains`.
    ///   - index: The record's place in its list.
    ///   - orTree: Whether a record not read in place is read from its tree; without, `nil` is
    ///     returned for it and nothing kept.
    /// - Throws: The error a record read from its tree raises, as for any other body; a record read
    ///   in place that fails is read from its tree (or not at all) instead.
    func read(_ record: JSONTextValue, path: String, index: Int?, orTree: Bool) throws -> Int?

    /// Reads the MessagePack record at `record` and keeps it, as the requirement above reads JSON text.
    func read(_ record: PackedValue, path: String, index: Int?, orTree: Bool) throws -> Int?
}

/// Where a response's main record or records sat, and what came beside them.
package struct InPlaceFound {
    /// Where the main value sits, for errors: `$`, `$.trains`.
    package var path: String
    /// The members of the object around the main value but the main value itself; `nil` for a
    /// bare body.
    package var container: [String: JSONValue]?
    /// The key the main value sat under.
    package var root: String?
}
