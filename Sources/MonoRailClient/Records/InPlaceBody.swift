package import Foundation

/// Reads a response body's main record or list where it lies: found by the ``ResponseLocator``'s
/// rules like every other body, its records read through a ``RecordReader`` from a ``RecordSource``
/// each, and everything around them walked once, checked as the tree's reader checks it.
///
/// Every function returns `nil` when the body is not read in place: not of the format, not what
/// the locator looks for, or anything about it unsound or only the tree decides (a key given twice,
/// a record the reader leaves to its tree). The caller then reads the body as a tree, which decides
/// and reports exactly as for any other body; nothing is handed back before all of it was read, so
/// giving up part way loses nothing.
package enum InPlaceBody {
    /// The list of a JSON or MessagePack body: a bare array, or the array under `listKey`, below
    /// the locator's namespace. A record its reader will not read in place is read from its tree.
    package static func list<Reader: RecordReader>(
        in body: Data, contentType: String?, maxDepth: Int, locator: ResponseLocator, listKey: String,
        typeName: String, reader: Reader
    ) -> InPlaceFound<[Reader.Record]>? {
        func list<Value: InPlaceValue>(_ whole: Value) -> InPlaceFound<[Reader.Record]>? {
            try? read(whole, locator: locator, roots: [listKey], shape: .array, required: false, typeName: typeName) {
                value, path in
                var records: [Reader.Record] = []
                let end = try value.walkElements { index, element in
                    if reader.readsInPlace, var source = element.record(keys: reader.keys, coder: reader.coder),
                        let record = try? Value.read(&source, with: reader, base: path, index: index)
                    {
                        records.append(record)
                        return source.end
                    }
                    let (tree, end) = try element.parse()
                    if let record = try reader.read(tree: tree, base: path, index: index) { records.append(record) }
                    return end
                }
                return (records, end)
            }
        }
        return withValue(body, contentType: contentType, maxDepth: maxDepth, json: list, packed: list)
    }

    /// The one record of a JSON or MessagePack body, found under the first of `roots` that holds
    /// one of `shape` (or the body itself, unless `required`), read in place.
    package static func record<Reader: RecordReader>(
        in body: Data, contentType: String?, maxDepth: Int, locator: ResponseLocator, roots: [String],
        shape: ResponseLocator.Shape, required: Bool, typeName: String, reader: Reader
    ) -> InPlaceFound<Reader.Record>? {
        guard reader.readsInPlace else { return nil }
        func record<Value: InPlaceValue>(_ whole: Value) -> InPlaceFound<Reader.Record>? {
            try? read(whole, locator: locator, roots: roots, shape: shape, required: required, typeName: typeName) {
                value, path in
                guard var source = value.record(keys: reader.keys, coder: reader.coder),
                    let record = try Value.read(&source, with: reader, base: path, index: nil)
                else { throw Stop() }
                return (record, source.end)
            }
        }
        return withValue(body, contentType: contentType, maxDepth: maxDepth, json: record, packed: record)
    }

    /// A record kept as MessagePack by a record cache, read in place.
    package static func storedRecord<Reader: RecordReader>(_ body: Data, maxDepth: Int, base: String, reader: Reader)
        -> Reader.Record?
    {
        guard reader.readsInPlace, !body.isEmpty else { return nil }
        return body.withUnsafeBytes { bytes in
            let value = PackedValue(bytes: bytes, offset: 0, maxDepth: maxDepth, depth: 0)
            guard var source = value.record(keys: reader.keys, coder: reader.coder),
                let record = try? reader.read(&source, base: base, index: nil), source.end == bytes.count
            else { return nil }
            return record
        }
    }

    /// Calls `body` with the whole body as a value read in place, when it is JSON (or of no declared
    /// type, read as JSON) or MessagePack and not empty.
    private static func withValue<Result>(
        _ data: Data, contentType: String?, maxDepth: Int, json: (JSONTextValue) -> Result?,
        packed: (PackedValue) -> Result?
    ) -> Result? {
        guard !data.isEmpty else { return nil }
        if let contentType, WireFormat.isMessagePack(contentType) {
            return data.withUnsafeBytes { bytes in
                packed(PackedValue(bytes: bytes, offset: 0, maxDepth: maxDepth, depth: 0))
            }
        }
        if let contentType, !ResponseDecoder.isJSON(contentType) { return nil }
        return data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var cursor = JSONCursor(bytes, maxDepth: maxDepth)
            cursor.skipWhitespace()
            return json(JSONTextValue(bytes: bytes, offset: cursor.offset, maxDepth: maxDepth, depth: 0))
        }
    }

    /// Finds the main value by the locator's rules, reads it with `main` (which says where it
    /// ends), then walks each object on the way to it to its end: the members beside the main value
    /// become trees, a key met twice on the way leaves the body to the tree, and nothing may follow
    /// the body.
    private static func read<Value: InPlaceValue, Main>(
        _ whole: Value, locator: ResponseLocator, roots: [String], shape: ResponseLocator.Shape, required: Bool,
        typeName: String, main: (Value, String) throws -> (Main, end: Int)
    ) throws -> InPlaceFound<Main> {
        let found = try locator.find(
            in: whole, roots: roots, shape: shape, requiresRoot: required, typeName: typeName)
        // The objects on the way, outermost first, and the key taken from each.
        var way: [(object: Value, key: String)] = []
        var value = whole
        for key in locator.namespaceKeys + (found.root.map { [$0] } ?? []) {
            guard let inner = value.member(key) else { throw Stop() }
            way.append((value, key))
            value = inner
        }
        guard value.offset == found.value.offset else { throw Stop() }
        let (mainValue, mainEnd) = try main(found.value, found.path)
        var end = mainEnd
        var container: [String: JSONValue]?
        var inner = found.value.offset
        for (level, (object, key)) in way.enumerated().reversed() {
            let beside = found.root != nil && level == way.count - 1
            var members: [String: JSONValue] = [:]
            let innerEnd = end
            end = try object.walkMembers { name, member in
                if member.offset == inner { return innerEnd }
                // Found first, but the tree keeps the last.
                if name == key { throw Stop() }
                guard beside else { return nil }
                let (tree, end) = try member.parse()
                members[name] = tree
                return end
            }
            if beside { container = members }
            inner = object.offset
        }
        guard whole.endsBody(at: end) else { throw Stop() }
        return InPlaceFound(main: mainValue, path: found.path, container: container, root: found.root)
    }
}
