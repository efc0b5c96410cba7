/// One record being read, member by member, from whatever it arrived as: a JSON tree
/// (``JSONTreeRecord``), JSON text read in place (``JSONTextRecord``) or MessagePack read in place
/// (``MessagePackRecord``). The model layer reads every record with one loop over this protocol, and
/// a new backing is a new conformance, not a new loop.
///
/// A backing read in place answers ``RecordMember/undecided`` for anything only the tree decides (a
/// key with escapes, a key that is not a string, broken syntax); its reader then reads the record's
/// tree instead, so the result, and the error a bad record raises, are exactly those of the tree.
package protocol RecordSource {
    /// The next member, its key matched against the model's; `nil` after the last.
    ///
    /// - Throws: ``JSONSyntaxError`` or ``MessagePackError`` for bytes the tree's reader refuses.
    mutating func nextMember() throws -> RecordMember?

    /// The value of the member ``nextMember()`` returned last. Apart from the member: a member is
    /// then plain data, which costs nothing to hand over, for every member of every record.
    var value: FieldSource { get }

    /// The record as received, for the record cache, once every member has been read.
    func wire(keyOrder: [String]) -> WireRecord

    /// The ``RecordDigest`` of the record's bytes, once every member has been read; `nil` for a
    /// backing without bytes.
    func digest() -> Int?

    /// The id when it is the record's first member, as it usually is, read without the rest: lets a
    /// reader find the record's instance before it decodes anything. `nil` when the backing cannot
    /// tell cheaply; the reader then reads the record.
    func leadingID() -> JSONValue?

    /// Checks the whole record as the tree's reader would and takes the ``RecordDigest`` of its
    /// bytes, without reading its members; `nil` when the backing cannot.
    ///
    /// - Throws: ``JSONSyntaxError`` or ``MessagePackError`` for a record the tree's reader refuses.
    mutating func digestWhole() throws -> Int?
}

/// A record read where it lies, which knows where it ends once read.
package protocol InPlaceRecordSource: RecordSource {
    /// Where the record ends, once every member has been read (or ``digestWhole()`` took it whole).
    var end: Int { get }
}

/// What one member of a record is to its model.
package enum RecordMember {
    /// The id.
    case id
    /// The value of the schema field at this index.
    case field(Int)
    /// The record's version (``RecordKeys/version``), a key no field has.
    case version
    /// A key the model does not know.
    case unknown
    /// Something only the tree decides.
    case undecided
}

// Fast paths that default to the slow one: a backing without them is read member by member.
extension RecordSource {
    package func digest() -> Int? { nil }
    package func leadingID() -> JSONValue? { nil }
    package mutating func digestWhole() throws -> Int? { nil }
}
