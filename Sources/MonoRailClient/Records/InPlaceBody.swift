package import Foundation

/// Reads a response body's main record or list where it lies: found by the ``ResponseLocator``'s
/// rules like every other body, its records read and kept by a ``RecordReader`` (from a
/// ``RecordSource`` each), and everything around them walked once, checked as the tree's reader
/// checks it.
///
/// Every function returns `nil` when the body is not read in place: not of the format, not what
/// the locator looks for, or anything about it unsound or only the tree decides (a key given twice,
/// a record the reader leaves to its tree). The caller then drops what the reader kept and reads
/// the body as a tree, which decides and reports exactly as for any other body.
package enum InPlaceBody {
    /// The list of a JSON or MessagePack body: a bare array, or the array under the first of
    /// `listKeys` that holds one, below the locator's namespace. A record not read in place is read
    /// from its tree.
    package static func list(
        in body: Data, contentType: String?, maxDepth: Int, locator: ResponseLocator, listKeys: [String],
        typeName: String, reader: some RecordReader
    ) -> InPlaceFound? {
        func list(_ list: some InPlaceValue, path: String) throws -> Int {
            try list.walkElements { index, element in
                try element.read(with: reader, path: path, index: index, orTree: true)
            }
        }
        // Each format's value is named here, so that `read` is compiled for it: generic over the
        // value, each member and element it walks would cost a type metadata look-up.
        return withValue(body, contentType: contentType, maxDepth: maxDepth) { (whole: JSONTextValue) in
            try? read(
                whole, locator: locator, roots: listKeys, shape: .array, required: false, typeName: typeName,
                main: list)
        } packed: { (whole: PackedValue) in
            try? read(
                whole, locator: locator, roots: listKeys, shape: .array, required: false, typeName: typeName,
                main: list)
        }
    }

    /// The one record of a JSON or MessagePack body, found under the first of `roots` that holds
    /// one of `shape` (or the body itself, unless `required`), read in place.
    package static func record(
        in body: Data, contentType: String?, maxDepth: Int, locator: ResponseLocator, roots: [String],
        shape: ResponseLocator.Shape, required: Bool, typeName: String, reader: some RecordReader
    ) -> InPlaceFound? {
        func record(_ record: some InPlaceValue, path: String) throws -> Int {
            guard let end = try record.read(with: reader, path: path, index: nil, orTree: false) else { throw Stop() }
            return end
        }
        return withValue(body, contentType: contentType, maxDepth: maxDepth) { (whole: JSONTextValue) in
            try? read(
                whole, locator: locator, roots: roots, shape: shape, required: required, typeName: typeName,
                main: record)
        } packed: { (whole: PackedValue) in
            try? read(
                whole, locator: locator, roots: roots, shape: shape, required: required, typeName: typeName,
                main: record)
        }
    }

    /// A record kept by a record cache, MessagePack or its JSON text, read in place; `false` when it
    /// is to be read as a tree.
    package static func storedRecord(
        _ body: Data, isJSON: Bool, maxDepth: Int, path: String, reader: some RecordReader
    ) -> Bool {
        guard !body.isEmpty else { return false }
        return body.withUnsafeBytes { raw in
            let end: Int?
            if isJSON {
                let value = JSONTextValue(
                    bytes: raw.bindMemory(to: UInt8.self), offset: 0, maxDepth: maxDepth, depth: 0)
                end = try? value.read(with: reader, path: path, index: nil, orTree: false)
            } else {
                let value = PackedValue(bytes: raw, offset: 0, maxDepth: maxDepth, depth: 0)
                end = try? value.read(with: reader, path: path, index: nil, orTree: false)
            }
            return end == raw.count
        }
    }

    /// Calls `json` or `packed` with the whole body as a value read in place, when it is JSON (or
    /// of no declared type, read as JSON) or MessagePack and not empty.
    private static func withValue(
        _ data: Data, contentType: String?, maxDepth: Int, json: (JSONTextValue) -> InPlaceFound?,
        packed: (PackedValue) -> InPlaceFound?
    ) -> InPlaceFound? {
        guard !data.isEmpty, let format = WireFormat.ofResponse(contentType: contentType) else { return nil }
        if format == .messagePack {
            return data.withUnsafeBytes { bytes in
                packed(PackedValue(bytes: bytes, offset: 0, maxDepth: maxDepth, depth: 0))
            }
        }
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
    private static func read<Value: InPlaceValue>(
        _ whole: Value, locator: ResponseLocator, roots: [String], shape: ResponseLocator.Shape, required: Bool,
        typeName: String, main: (Value, String) throws -> Int
    ) throws -> InPlaceFound {
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
        var end = try main(found.value, found.path)
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
        return InPlaceFound(path: found.path, container: container, root: found.root)
    }
}
