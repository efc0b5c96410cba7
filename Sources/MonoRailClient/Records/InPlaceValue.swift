/// A value of a body read where it lies, as ``InPlaceBody`` walks it: JSON text
/// (``JSONTextValue``) or MessagePack (``PackedValue``). Every walk checks what it steps over as the
/// tree's reader would, so a body walked whole is known to read as a tree.
///
/// As an ``EnvelopeValue``, ``EnvelopeValue/member(_:)`` answers the *first* member of a key
/// without walking the rest of the object (a tree keeps the last): ``InPlaceBody`` walks every
/// object it took a member from to its end, and leaves a key given twice to the tree.
package protocol InPlaceValue: EnvelopeValue {
    associatedtype Source: InPlaceRecordSource

    /// Where the value starts.
    var offset: Int { get }

    /// Walks the members of the object: `visit` gets each key and value and returns where the value
    /// ends when it read it, or `nil` for the walk to check it and step over it. Returns where the
    /// object ends.
    ///
    /// - Throws: ``JSONSyntaxError`` or ``MessagePackError`` for what the tree's reader refuses, and
    ///   what `visit` throws.
    func walkMembers(_ visit: (String, Self) throws -> Int?) throws -> Int

    /// Walks the elements of the array as ``walkMembers(_:)`` walks an object's members.
    func walkElements(_ visit: (Int, Self) throws -> Int?) throws -> Int

    /// The value as a tree, and where it ends.
    func parse() throws -> (value: JSONValue, end: Int)

    /// Whether nothing but what the format allows after a whole body follows `end`.
    func endsBody(at end: Int) -> Bool

    /// The value as a record read in place; `nil` when it is not a record of that form.
    func record(keys: RecordKeys, coder: FieldCoder) -> Source?

    /// Has `reader` read the record at this value and keep it (``RecordReader``).
    func read(with reader: some RecordReader, path: String, index: Int?, orTree: Bool) throws -> Int?
}

extension InPlaceValue {
    /// The first member named `key`, stepping over (and checking) the ones before it; `nil` also
    /// when the value is not an object or a member before it is not sound.
    package func member(_ key: String) -> Self? {
        guard isObject else { return nil }
        var found: Self?
        _ = try? walkMembers { name, value in
            if name == key {
                found = value
                throw Stop()
            }
            return nil
        }
        return found
    }

    package var memberCount: Int {
        var keys = Set<String>()
        _ = try? walkMembers { name, _ in
            keys.insert(name)
            return nil
        }
        return keys.count
    }

    package var tree: JSONValue { (try? parse().value) ?? .null }
}

/// Ends a walk early.
struct Stop: Error {}
