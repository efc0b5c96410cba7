import Foundation

/// A record of a JSON text read where it lies, without building its tree.
///
/// Every value is checked as the parser would check it (``JSONCursor/skipValue(depth:)``): by the
/// ``FieldDecoder`` that reads it, when that read all of it in place (it says where the value ends,
/// ``FieldCoder/valueEnd``), or else when the next member is asked for. The ordinary record is read:
/// an object whose keys have no escapes; anything else is ``RecordMember/undecided``.
package struct JSONTextRecord: InPlaceRecordSource {
    private let record: JSONTextValue
    private let keys: RecordKeys
    /// Where the field decoder says the value it read ended (``FieldCoder/valueEnd``).
    private let context: DecodingContext
    private var cursor: JSONCursor
    /// The value of the member handed out last, and whether to step over it before the next.
    private var current: JSONTextValue
    private var isPending = false
    /// The field after the last one found.
    private var expected = 0
    private var isDone = false
    private var wholeDigest: Int?
    /// Where the record ends, once read to its end.
    package private(set) var end = 0

    /// A source over the object at `record`, or `nil` when it is not one or is nested too deep.
    package init?(_ record: JSONTextValue, keys: RecordKeys, coder: FieldCoder) {
        guard record.cursor.current == UInt8(ascii: "{"), record.depth < record.maxDepth else { return nil }
        self.record = record
        self.keys = keys
        self.context = coder.decoding
        self.cursor = record.cursor
        self.current = record
        cursor.offset += 1
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "}") { finish(at: cursor.offset + 1) }
    }

    package mutating func nextMember() throws -> RecordMember? {
        if isPending {
            isPending = false
            if context.valueEnd > cursor.offset {
                cursor.offset = context.valueEnd
            } else {
                try cursor.skipValue(depth: current.depth)
            }
            cursor.skipWhitespace()
            switch cursor.continues(closing: UInt8(ascii: "}")) {
            case true?: break
            case false?: finish(at: cursor.offset)
            case nil: return .undecided
            }
        }
        if isDone { return nil }
        guard cursor.current == UInt8(ascii: "\"") else { return .undecided }
        let keyStart = cursor.offset + 1
        // A key with escapes may spell a field's key differently: the tree decides.
        guard try !cursor.skipString() else { return .undecided }
        let key = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: record.bytes[keyStart..<(cursor.offset - 1)]))
        cursor.skipWhitespace()
        guard cursor.current == UInt8(ascii: ":") else { return .undecided }
        cursor.offset += 1
        cursor.skipWhitespace()
        // A value must follow before any reader looks at it: the text may end here.
        guard cursor.current != nil else { return .undecided }
        // Values sit one level below the record.
        current = JSONTextValue(
            bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth, depth: record.depth + 1)
        isPending = true
        context.valueEnd = 0
        if let index = keys.field(key, expected: expected) {
            expected = index + 1
            return .field(index)
        }
        return keys.member(key)
    }

    package var value: FieldSource { FieldSource(.text(current)) }

    private mutating func finish(at end: Int) {
        isDone = true
        self.end = end
    }

    private var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: record.bytes[record.offset..<end]) }

    package func wire(keyOrder: [String]) -> WireRecord { .text(Data(bytes), keyOrder: keyOrder) }

    package func digest() -> Int? { wholeDigest ?? RecordDigest.of(UnsafeRawBufferPointer(bytes)) }

    package func leadingID() -> JSONValue? {
        var cursor = record.cursor
        cursor.offset += 1
        cursor.skipWhitespace()
        guard keys.isQuotedID(in: record.bytes, at: cursor.offset) else { return nil }
        cursor.offset += keys.id.utf8.count + 2
        cursor.skipWhitespace()
        guard cursor.current == UInt8(ascii: ":") else { return nil }
        cursor.offset += 1
        cursor.skipWhitespace()
        return JSONTextValue(
            bytes: record.bytes, offset: cursor.offset, maxDepth: record.maxDepth, depth: record.depth + 1
        ).scalar()?.value
    }

    package mutating func digestWhole() throws -> Int? {
        var whole = record.cursor
        try whole.skipValue(depth: record.depth)
        let digest = RecordDigest.of(
            UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: record.bytes[record.offset..<whole.offset])))
        wholeDigest = digest
        end = whole.offset
        return digest
    }
}
