/// What reads one model's records for ``InPlaceBody``: in place from any ``RecordSource``, or from
/// a record's tree when in place will not do. The model layer's record decoder is the one reader.
package protocol RecordReader {
    associatedtype Record

    /// The model's keys, for the sources made for it.
    var keys: RecordKeys { get }
    /// The coder its field decoder uses, which a JSON text source asks where a value ended.
    var coder: FieldCoder { get }
    /// Whether records may be read in place at all: not for a model that rewrites each record's tree.
    var readsInPlace: Bool { get }

    /// Reads a record of JSON text in place; `nil` when only its tree decides. An error means the
    /// same: the caller then reads the tree, which reports it. One requirement per backing, not one
    /// generic over the source: the reader's loop is then compiled for each backing, where through a
    /// generic source every member was a call through a witness table.
    ///
    /// - Parameters:
    ///   - base: Where the record or its list sits, for errors: `$.trains`.
    ///   - index: The record's place in its list.
    func read(_ source: inout JSONTextRecord, base: String, index: Int?) throws -> Record?

    /// Reads a MessagePack record in place, as the requirement above reads JSON text.
    func read(_ source: inout MessagePackRecord, base: String, index: Int?) throws -> Record?

    /// Reads a record's tree; `nil` when the model's hook dropped it.
    ///
    /// - Throws: The error the record raises, as for any other body.
    func read(tree: JSONValue, base: String, index: Int?) throws -> Record?
}

/// A response's main record or records read in place, where they sit, and what came beside them.
package struct InPlaceFound<Main> {
    package var main: Main
    /// Where the main value sits, for errors: `$`, `$.trains`.
    package var path: String
    /// The members of the object around the main value but the main value itself; `nil` for a
    /// bare body.
    package var container: [String: JSONValue]?
    /// The key the main value sat under.
    package var root: String?
}
