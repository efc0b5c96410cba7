extension PackedValue: InPlaceValue {
    package var isObject: Bool { if case (.map, _)? = header() { true } else { false } }
    package var isArray: Bool { if case (.array, _)? = header() { true } else { false } }

    package func walkMembers(_ visit: (String, PackedValue) throws -> Int?) throws -> Int {
        var cursor = cursor
        guard depth < maxDepth, case .map(let count) = try cursor.header() else {
            throw cursor.error(.tooDeep, "expected a map within \(maxDepth) levels", at: offset)
        }
        for _ in 0..<count {
            let key = try MessagePackReader.jsonKey(&cursor)
            try step(&cursor, visit(key, member(at: cursor.offset)))
        }
        return cursor.offset
    }

    package func walkElements(_ visit: (Int, PackedValue) throws -> Int?) throws -> Int {
        var cursor = cursor
        guard depth < maxDepth, case .array(let count) = try cursor.header() else {
            throw cursor.error(.tooDeep, "expected an array within \(maxDepth) levels", at: offset)
        }
        for index in 0..<count { try step(&cursor, visit(index, member(at: cursor.offset))) }
        return cursor.offset
    }

    /// Moves past an item's value: to where its visitor says it ends, or over it, checked.
    private func step(_ cursor: inout MessagePackCursor, _ end: Int?) throws(MessagePackError) {
        if let end {
            cursor = MessagePackCursor(bytes, offset: end)
        } else {
            try cursor.skipValue(maxDepth: maxDepth - depth - 1, checkingJSON: true)
        }
    }

    /// The value at `offset` inside this one.
    private func member(at offset: Int) -> PackedValue {
        PackedValue(bytes: bytes, offset: offset, maxDepth: maxDepth, depth: depth + 1)
    }

    package func parse() throws -> (value: JSONValue, end: Int) {
        var cursor = cursor
        let value = try MessagePackReader.json(&cursor, depth: depth, maxDepth: maxDepth)
        return (value, cursor.offset)
    }

    package func endsBody(at end: Int) -> Bool { end == bytes.count }

    package func record(keys: RecordKeys, coder: FieldCoder) -> MessagePackRecord? {
        MessagePackRecord(self, keys: keys)
    }

    package func read(with reader: some RecordReader, path: String, index: Int?, orTree: Bool) throws -> Int? {
        try reader.read(self, path: path, index: index, orTree: orTree)
    }
}
