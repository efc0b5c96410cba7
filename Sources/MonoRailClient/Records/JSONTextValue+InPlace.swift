extension JSONTextValue: InPlaceValue {
    package var isObject: Bool { cursor.current == UInt8(ascii: "{") }
    package var isArray: Bool { cursor.current == UInt8(ascii: "[") }

    package func walkMembers(_ visit: (String, JSONTextValue) throws -> Int?) throws -> Int {
        try walk(closing: UInt8(ascii: "}")) { cursor, _ in
            guard cursor.current == UInt8(ascii: "\"") else { throw cursor.error("expected a key") }
            let key = try cursor.parseString()
            cursor.skipWhitespace()
            guard cursor.current == UInt8(ascii: ":") else { throw cursor.error("expected ':' after a key") }
            cursor.offset += 1
            cursor.skipWhitespace()
            return try visit(key, member(at: cursor.offset))
        }
    }

    package func walkElements(_ visit: (Int, JSONTextValue) throws -> Int?) throws -> Int {
        try walk(closing: UInt8(ascii: "]")) { cursor, index in try visit(index, member(at: cursor.offset)) }
    }

    /// Walks the items of the array or object at ``offset``: `item` reads up to the item's value,
    /// and says where that ends when it read it.
    private func walk(closing: UInt8, _ item: (inout JSONCursor, Int) throws -> Int?) throws -> Int {
        var cursor = cursor
        guard depth + 1 <= maxDepth else { throw cursor.error("nesting deeper than \(maxDepth) levels") }
        cursor.offset += 1
        cursor.skipWhitespace()
        if cursor.current == closing { return cursor.offset + 1 }
        var index = 0
        while true {
            if let end = try item(&cursor, index) {
                cursor.offset = end
            } else {
                try cursor.skipValue(depth: depth + 1)
            }
            index += 1
            cursor.skipWhitespace()
            guard let more = cursor.continues(closing: closing) else {
                throw cursor.error("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
            }
            if !more { return cursor.offset }
        }
    }

    /// The value at `offset` inside this one.
    private func member(at offset: Int) -> JSONTextValue {
        JSONTextValue(bytes: bytes, offset: offset, maxDepth: maxDepth, depth: depth + 1)
    }

    package func parse() throws -> (value: JSONValue, end: Int) {
        var cursor = cursor
        let value = try JSONParser.value(at: &cursor, depth: depth)
        return (value, cursor.offset)
    }

    package func endsBody(at end: Int) -> Bool {
        var cursor = JSONCursor(bytes, offset: end, maxDepth: maxDepth)
        cursor.skipWhitespace()
        return cursor.isAtEnd
    }

    package func record(keys: RecordKeys, coder: FieldCoder) -> JSONTextRecord? {
        JSONTextRecord(self, keys: keys, coder: coder)
    }

    package func read(with reader: some RecordReader, path: String, index: Int?, orTree: Bool) throws -> Int? {
        try reader.read(self, path: path, index: index, orTree: orTree)
    }
}
