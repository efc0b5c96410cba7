import Foundation

// MessagePack list bodies are read in place: each record is checked exactly as the tree reader
// would check it and then decoded where it lies, instead of the whole body being built as a tree
// first. Building and freeing that tree was most of what a MessagePack list cost over its fields;
// checking a record just before reading it also finds its bytes still in the cache.
extension ModelSetup {
    /// The records of a MessagePack list body, decoded in place.
    ///
    /// `nil` when the body is not MessagePack, not a list where ``records(in:)`` looks for one, or
    /// anything in it fails: the caller then reads the body as a tree, which reports the failure
    /// exactly as for any other body. Nothing is merged before all records are decoded, so giving
    /// up part way loses nothing.
    func packedRecords(in response: APIResponse, decoder: RecordDecoder<Model>) -> Located<[RecordPatch<Model>]>? {
        guard let contentType = response.response.headerFields[.contentType], WireFormat.isMessagePack(contentType),
            !response.body.isEmpty
        else { return nil }
        let maxDepth = client.responseDecoder.messagePackReader.maxDepth
        return response.body.withUnsafeBytes { bytes in
            try? packedList(in: bytes, maxDepth: maxDepth, decoder: decoder)
        }
    }

    /// Finds the list as ``records(in:)`` does (the namespace, then a bare array or the array under
    /// the list key) and decodes it, reading the other members as JSON for side-loads.
    private func packedList(
        in bytes: UnsafeRawBufferPointer, maxDepth: Int, decoder: RecordDecoder<Model>
    ) throws -> Located<[RecordPatch<Model>]>? {
        var cursor = MessagePackCursor(bytes)
        let base = locator.basePath
        // Without a namespace the records are checked one by one as they are read, and the members
        // beside them as they are built; with one, the whole body is checked first.
        var depth = 0
        var checkedWhole = false
        if !locator.namespaceKeys.isEmpty {
            try cursor.skipValue(maxDepth: maxDepth, checkingJSON: true)
            guard cursor.isAtEnd else { return nil }
            checkedWhole = true
            var root = 0
            for key in locator.namespaceKeys {
                guard let member = try Self.member(key, ofMapAt: root, in: bytes) else { return nil }
                root = member
                depth += 1
            }
            cursor = MessagePackCursor(bytes, offset: root)
        }
        guard depth + 2 < maxDepth else { return nil }
        let located: Located<[RecordPatch<Model>]>
        switch try cursor.header() {
        case .array(let count):
            let patches = try records(
                count, &cursor, bytes: bytes, depth: depth + 1, maxDepth: maxDepth, base: base, decoder: decoder)
            located = Located(main: patches, path: base, container: nil, rootKey: nil)
        case .map(let count):
            let key = listKey
            var patches: [RecordPatch<Model>]?
            var container: [String: JSONValue] = [:]
            for _ in 0..<count {
                let name = try MessagePackReader.jsonKey(&cursor)
                guard name == key else {
                    container[name] = try MessagePackReader.json(&cursor, depth: depth + 1, maxDepth: maxDepth)
                    continue
                }
                // A repeated list key: the tree keeps the last; leave that case to it.
                guard patches == nil, case .array(let elements) = try cursor.header() else { return nil }
                patches = try records(
                    elements, &cursor, bytes: bytes, depth: depth + 2, maxDepth: maxDepth, base: "\(base).\(key)",
                    decoder: decoder)
            }
            guard let patches else { return nil }
            located = Located(main: patches, path: "\(base).\(key)", container: container, rootKey: key)
        default:
            return nil
        }
        guard checkedWhole || cursor.isAtEnd else { return nil }
        return located
    }

    /// Checks and decodes `count` records, at `depth`, starting at the cursor, which ends after
    /// them, and that no record appears twice.
    private func records(
        _ count: Int, _ cursor: inout MessagePackCursor, bytes: UnsafeRawBufferPointer, depth: Int, maxDepth: Int,
        base: String, decoder: RecordDecoder<Model>
    ) throws -> [RecordPatch<Model>] {
        var patches: [RecordPatch<Model>] = []
        patches.reserveCapacity(MessagePackCursor.initialCapacity(count))
        // A model that rewrites records needs each one as a tree to hand to its hook.
        let readsInPlace = !Model.resourceSchema.rewritesRecords
        var rising = RisingIDs()
        for index in 0..<count {
            let record = PackedValue(bytes: bytes, offset: cursor.offset, maxDepth: maxDepth)
            let location = RecordLocation(base: base, index: index)
            var end = 0
            if readsInPlace, let patch = try? decoder.decodeInPlace(record, at: location, depth: depth, end: &end) {
                rising.note(patch.id)
                patches.append(patch)
                cursor = MessagePackCursor(bytes, offset: end)
                continue
            }
            // The tree reader checks the record as it builds it.
            let tree = try MessagePackReader.json(&cursor, depth: depth, maxDepth: maxDepth)
            if let patch = try decoder.decodeUnlessDropped(tree, at: location) {
                rising.note(patch.id)
                patches.append(patch)
            }
        }
        if !rising.hold { try RecordPatch.requireDistinctIDs(patches, at: base) }
        return patches
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
