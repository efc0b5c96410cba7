/// A value inside a MessagePack body, read where it lies instead of through a tree. Valid only while
/// its bytes are, and only once it has been checked as the tree reader would check it (so strings
/// are known to be UTF-8).
package struct PackedValue {
    package let bytes: UnsafeRawBufferPointer
    package let offset: Int
    /// The nesting limit the body is checked against.
    package let maxDepth: Int
    /// The arrays and maps around the value, counted against ``maxDepth`` as the tree reader counts them.
    package let depth: Int

    package init(bytes: UnsafeRawBufferPointer, offset: Int, maxDepth: Int, depth: Int) {
        self.bytes = bytes
        self.offset = offset
        self.maxDepth = maxDepth
        self.depth = depth
    }

    package var cursor: MessagePackCursor { MessagePackCursor(bytes, offset: offset) }

    var isNil: Bool { offset < bytes.count && bytes[offset] == 0xc0 }

    /// The value as the JSON tree holds it.
    package func json() throws(MessagePackError) -> JSONValue {
        var cursor = cursor
        return try MessagePackReader.json(&cursor, depth: depth, maxDepth: maxDepth)
    }

    /// The header of the value, and a cursor just past it.
    func header() -> (MessagePackCursor.Header, MessagePackCursor)? {
        var cursor = cursor
        guard let header = try? cursor.header() else { return nil }
        return (header, cursor)
    }
}
