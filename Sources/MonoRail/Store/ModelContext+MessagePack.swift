import Foundation

// MessagePack list bodies are read in place: the body is checked whole, exactly as the tree reader
// would check it, and then each record is decoded where it lies instead of being built as a tree
// first. Building and freeing that tree was most of what a MessagePack list cost over its fields.
extension ModelContext {
    /// The records of a MessagePack list body, decoded in place; `nil` when the body is not
    /// MessagePack or not a list where ``records(in:)`` looks for one, and the caller reads it as a
    /// tree, which reports what is wrong.
    func packedRecords(in response: APIResponse, decoder: RecordDecoder<Model>) throws -> Located<
        [RecordPatch<Model>]
    >? {
        guard let contentType = response.response.headerFields[.contentType], WireFormat.isMessagePack(contentType),
            !response.body.isEmpty
        else { return nil }
        let maxDepth = client.responseDecoder.messagePackReader.maxDepth
        return try response.body.withUnsafeBytes { bytes -> Located<[RecordPatch<Model>]>? in
            guard let list = try? locateList(in: bytes, maxDepth: maxDepth) else { return nil }
            var patches: [RecordPatch<Model>] = []
            patches.reserveCapacity(list.main.count)
            var keepsDefaultHook = false
            var offset = list.main.start
            for index in 0..<list.main.count {
                let record = MessagePackField(bytes: bytes, offset: offset, maxDepth: maxDepth)
                let location = RecordLocation(base: list.path, index: index)
                if index == 0 {
                    // The first record goes through the tree, which also tells whether the model
                    // rewrites records; the rest are read in place only when it does not.
                    let probe = try DefaultHookProbe.run { try decoder.decode(record.json(), at: location) }
                    keepsDefaultHook = probe.defaultRan
                    patches.append(probe.result)
                } else if keepsDefaultHook, let patch = try? decoder.decodeInPlace(record, at: location, end: &offset) {
                    patches.append(patch)
                    continue
                } else {
                    patches.append(try decoder.decode(record.json(), at: location))
                }
                var cursor = record.cursor
                try cursor.skipValue(maxDepth: .max)
                offset = cursor.offset
            }
            return Located(main: patches, path: list.path, container: list.container, rootKey: list.rootKey)
        }
    }

    /// Where the records of a list body start and how many there are, mirroring ``records(in:)``: the namespace, then a
    /// bare array or the array under the list key, with the other members read as JSON for
    /// side-loads. `nil` for any other shape.
    private func locateList(in bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(MessagePackError) -> Located<
        (start: Int, count: Int)
    >? {
        var cursor = MessagePackCursor(bytes)
        var children: [Int] = []
        try MessagePackReader.validateJSON(&cursor, maxDepth: maxDepth, children: &children)
        guard cursor.isAtEnd else { return nil }
        var base = "$"
        var root = 0
        if let namespace = conventions.rootNamespace, !namespace.isEmpty {
            for key in namespace.split(separator: ".", omittingEmptySubsequences: true) {
                guard let member = try Self.member(String(key), ofMapAt: root, in: bytes) else { return nil }
                root = member
            }
            base = "$.\(namespace)"
            children = []
        }
        cursor = MessagePackCursor(bytes, offset: root)
        switch try cursor.header() {
        case .array(let count):
            return Located(main: (cursor.offset, count), path: base, container: nil, rootKey: nil)
        case .map(let count):
            let key: String
            switch conventions.responseRoot {
            case .modelName: key = plural
            case .fixed(_, let list): key = list
            case .bare: key = "results"
            }
            var records: (start: Int, count: Int)?
            var container: [String: JSONValue] = [:]
            for member in 0..<count {
                let name = try MessagePackReader.jsonKey(&cursor)
                if name != key {
                    container[name] = try MessagePackReader.json(&cursor, depth: 1, maxDepth: maxDepth)
                    continue
                }
                // A repeated list key: the tree keeps the last; leave that case to it.
                guard records == nil, case .array(let elements) = try cursor.header() else { return nil }
                records = (cursor.offset, elements)
                guard member + 1 < count else { break }
                // The check above noted where the next key starts; without it, step over the list.
                if children.count == count * 2 {
                    cursor = MessagePackCursor(bytes, offset: children[member * 2 + 2])
                } else {
                    for _ in 0..<elements { try cursor.skipValue(maxDepth: .max) }
                }
            }
            guard let records else { return nil }
            return Located(main: records, path: "\(base).\(key)", container: container, rootKey: key)
        default:
            return nil
        }
    }

    /// Where the value of the last `key` in the map at `offset` starts, as a tree lookup finds it.
    private static func member(_ key: String, ofMapAt offset: Int, in bytes: UnsafeRawBufferPointer)
        throws(MessagePackError) -> Int?
    {
        var cursor = MessagePackCursor(bytes, offset: offset)
        guard case .map(let count) = try cursor.header() else { return nil }
        var found: Int?
        for _ in 0..<count {
            let name = try MessagePackReader.jsonKey(&cursor)
            if name == key { found = cursor.offset }
            try cursor.skipValue(maxDepth: .max)
        }
        return found
    }
}
