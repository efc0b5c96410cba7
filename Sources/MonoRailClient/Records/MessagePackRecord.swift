import Foundation

/// A record of a MessagePack body read where it lies, without building its tree.
///
/// Each value is checked as the tree reader would check it before it is handed out
/// (``MessagePackCursor/skipValue(maxDepth:checkingJSON:)``), with the nesting it sits at. The
/// ordinary record is read: a map with string keys; anything else is ``RecordMember/undecided``.
package struct MessagePackRecord: InPlaceRecordSource {
    private let record: PackedValue
    private let keys: RecordKeys
    private var cursor: MessagePackCursor
    private var remaining: Int
    /// The field after the last one found.
    private var expected = 0
    /// The value of the member handed out last.
    private var current: PackedValue

    /// A source over the map at `record`; `nil` when it is not a map.
    package init?(_ record: PackedValue, keys: RecordKeys) {
        var cursor = record.cursor
        guard record.depth < record.maxDepth, case .map(let count)? = try? cursor.header() else { return nil }
        self.record = record
        self.keys = keys
        self.cursor = cursor
        self.remaining = count
        self.current = record
    }

    /// Where the record ends, once read to its end.
    package var end: Int { cursor.offset }

    package mutating func nextMember() throws -> RecordMember? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        guard case .string(let length) = try cursor.header() else { return .undecided }
        let key = cursor.take(length)
        // Keys are checked as the tree reader would (field keys are known text, so this is for the others).
        guard String.isValidUTF8(key) else { return .undecided }
        // Values sit one level below the record.
        current = PackedValue(
            bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth, depth: record.depth + 1)
        try cursor.skipValue(maxDepth: record.maxDepth - current.depth, checkingJSON: true)
        if let index = keys.field(key, expected: expected) {
            expected = index + 1
            return .field(index)
        }
        return keys.member(key)
    }

    package var value: FieldSource { FieldSource(.packed(current)) }

    package func wire(keyOrder: [String]) -> WireRecord {
        .packed(Data(UnsafeRawBufferPointer(rebasing: record.bytes[record.offset..<cursor.offset])))
    }
}
