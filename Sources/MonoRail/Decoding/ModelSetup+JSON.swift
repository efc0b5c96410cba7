import Foundation

// JSON list bodies are read in place, as MessagePack ones are (`ModelSetup+MessagePack.swift`): each
// record is checked exactly as the parser would check it and decoded where it lies, instead of the
// whole body being built as a tree of dictionaries and strings first.
extension ModelSetup {
    /// The records of a JSON list body, decoded in place.
    ///
    /// `nil` when the body is not JSON, not a list where ``records(in:)`` looks for one, or anything
    /// in it fails: the caller then reads the body as a tree, which reports the failure exactly as
    /// for any other body. Nothing is merged before all records are decoded, so giving up part way
    /// loses nothing.
    func textRecords(in response: APIResponse, decoder: RecordDecoder<Model>) -> Located<[RecordPatch<Model>]>? {
        guard Self.hasJSONBody(response) else { return nil }
        let maxDepth = client.responseDecoder.parser.maxDepth
        return response.body.withUnsafeBytes { raw in
            try? textList(in: raw.bindMemory(to: UInt8.self), maxDepth: maxDepth, decoder: decoder)
        }
    }

    /// The one record of a JSON body, found as ``record(in:)`` finds it and decoded in place.
    ///
    /// `nil` when the body is not JSON, the record is not an object read in place (see
    /// ``RecordDecoder/decodeInPlace(_:at:end:)``: no id, as a write's answer may have, or
    /// anything unusual), or anything fails: the caller then reads the body as a tree, which decides
    /// and reports exactly as for any other body. The members beside the record become trees.
    func textRecord(in response: APIResponse, decoder: RecordDecoder<Model>) -> Located<RecordPatch<Model>>? {
        guard Self.hasJSONBody(response), !Model.resourceSchema.rewritesRecords else { return nil }
        let maxDepth = client.responseDecoder.parser.maxDepth
        return response.body.withUnsafeBytes { raw -> Located<RecordPatch<Model>>? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let tape = try? JSONTape(bytes, maxDepth: maxDepth) else { return nil }
            defer { tape.close() }
            let (roots, shape, required) = recordRoots
            guard
                let found = try? locator.find(
                    in: JSONTapeValue(tape: tape, index: 0), roots: roots, shape: shape, requiresRoot: required,
                    typeName: Model.resourceSchema.typeName),
                found.value.isObject, let offset = tape.offset(ofValueAt: found.value.index)
            else { return nil }
            let depth = locator.namespaceKeys.count + (found.root == nil ? 0 : 1)
            var end = 0
            guard
                let patch = try? decoder.decodeInPlace(
                    JSONTextValue(bytes: bytes, offset: offset, maxDepth: maxDepth, depth: depth),
                    at: RecordLocation(base: found.path), end: &end)
            else { return nil }
            var container: [String: JSONValue]?
            if let around = found.container {
                var members: [String: JSONValue] = [:]
                // The record itself is not needed beside the record.
                around.forEachMember { key, value in if key != found.root { members[key] = value.tree } }
                container = members
            }
            return Located(main: patch, path: found.path, container: container, rootKey: found.root)
        }
    }

    /// Whether the response has a body, in JSON (or of no declared type, read as JSON).
    private static func hasJSONBody(_ response: APIResponse) -> Bool {
        if let contentType = response.response.headerFields[.contentType], !ResponseDecoder.isJSON(contentType) {
            return false
        }
        return !response.body.isEmpty
    }

    /// Finds the list as ``records(in:)`` does (the namespace, then a bare array or the array under
    /// the list key) and decodes it, reading the other members as trees for side-loads.
    private func textList(
        in bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, decoder: RecordDecoder<Model>
    ) throws -> Located<[RecordPatch<Model>]>? {
        var cursor = JSONCursor(bytes, maxDepth: maxDepth)
        cursor.skipWhitespace()
        let base = locator.basePath
        // Without a namespace the records are checked one by one as they are read, and the members
        // beside them as they are built; with one, the whole body is checked first.
        var depth = 0
        var checkedWhole = false
        if !locator.namespaceKeys.isEmpty {
            var whole = cursor
            try whole.skipValue(depth: 0)
            whole.skipWhitespace()
            guard whole.isAtEnd else { return nil }
            checkedWhole = true
            for key in locator.namespaceKeys {
                guard let member = try Self.member(key, ofObjectAt: cursor.offset, in: bytes, maxDepth: maxDepth)
                else { return nil }
                cursor.offset = member
                depth += 1
            }
        }
        guard depth + 2 < maxDepth else { return nil }
        let located: Located<[RecordPatch<Model>]>
        switch cursor.current {
        case UInt8(ascii: "["):
            let patches = try records(&cursor, depth: depth + 1, base: base, decoder: decoder)
            located = Located(main: patches, path: base, container: nil, rootKey: nil)
        case UInt8(ascii: "{"):
            let key = Array(listKey.utf8)
            var patches: [RecordPatch<Model>]?
            var container: [String: JSONValue] = [:]
            cursor.offset += 1
            cursor.skipWhitespace()
            // An empty object has no list: the tree says so.
            var closed = false
            while !closed {
                guard cursor.current == UInt8(ascii: "\"") else { return nil }
                let name = try cursor.parseString()
                cursor.skipWhitespace()
                guard cursor.current == UInt8(ascii: ":") else { return nil }
                cursor.offset += 1
                cursor.skipWhitespace()
                if name.utf8.elementsEqual(key) {
                    // A repeated list key: the tree keeps the last; leave that case to it.
                    guard patches == nil, cursor.current == UInt8(ascii: "[") else { return nil }
                    patches = try records(
                        &cursor, depth: depth + 2, base: "\(base).\(listKey)", decoder: decoder)
                } else {
                    container[name] = try JSONParser.value(at: &cursor, depth: depth + 1)
                }
                cursor.skipWhitespace()
                guard let more = cursor.continues(closing: UInt8(ascii: "}")) else { return nil }
                closed = !more
            }
            guard let patches else { return nil }
            located = Located(main: patches, path: "\(base).\(listKey)", container: container, rootKey: listKey)
        default:
            return nil
        }
        cursor.skipWhitespace()
        guard checkedWhole || cursor.isAtEnd else { return nil }
        return located
    }

    /// Checks and decodes the records of the array at the cursor, which is inside `depth - 1` arrays
    /// and objects, and that no record appears twice; the cursor ends after the array.
    private func records(
        _ cursor: inout JSONCursor, depth: Int, base: String, decoder: RecordDecoder<Model>
    ) throws -> [RecordPatch<Model>] {
        guard depth <= cursor.maxDepth else { throw cursor.error("nesting deeper than \(cursor.maxDepth) levels") }
        cursor.offset += 1
        cursor.skipWhitespace()
        var patches: [RecordPatch<Model>] = []
        if cursor.current == UInt8(ascii: "]") {
            cursor.offset += 1
            return patches
        }
        // A model that rewrites records needs each one as a tree to hand to its hook.
        let readsInPlace = !Model.resourceSchema.rewritesRecords
        var rising = RisingIDs()
        var index = 0
        while true {
            let record = JSONTextValue(
                bytes: cursor.bytes, offset: cursor.offset, maxDepth: cursor.maxDepth, depth: depth)
            let location = RecordLocation(base: base, index: index)
            var end = 0
            if readsInPlace, let patch = try? decoder.decodeInPlace(record, at: location, end: &end) {
                rising.note(patch.id)
                patches.append(patch)
                cursor.offset = end
            } else {
                // The tree reader checks the record as it builds it.
                let tree = try JSONParser.value(at: &cursor, depth: depth)
                if let patch = try decoder.decodeUnlessDropped(tree, at: location) {
                    rising.note(patch.id)
                    patches.append(patch)
                }
            }
            index += 1
            cursor.skipWhitespace()
            guard let more = cursor.continues(closing: UInt8(ascii: "]")) else {
                throw cursor.error("expected ',' or ']' in an array")
            }
            if !more { break }
        }
        if !rising.hold { try RecordPatch.requireDistinctIDs(patches, at: base) }
        return patches
    }

    /// Where the value of the last `key` in the object at `offset` starts, as a tree lookup finds it.
    private static func member(
        _ key: String, ofObjectAt offset: Int, in bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int
    )
        throws(JSONSyntaxError) -> Int?
    {
        var cursor = JSONCursor(bytes, offset: offset, maxDepth: maxDepth)
        guard cursor.current == UInt8(ascii: "{") else { return nil }
        cursor.offset += 1
        cursor.skipWhitespace()
        var found: Int?
        while cursor.current == UInt8(ascii: "\"") {
            let name = try cursor.parseString()
            cursor.skipWhitespace()
            cursor.offset += 1  // ':' (the body was checked)
            cursor.skipWhitespace()
            if name == key { found = cursor.offset }
            try cursor.skipValue(depth: 1)
            cursor.skipWhitespace()
            guard cursor.current == UInt8(ascii: ",") else { break }
            cursor.offset += 1
            cursor.skipWhitespace()
        }
        return found
    }
}
