import Foundation

/// A JSON:API resource object of a JSON text read where it lies, as ``JSONAPIRecord`` reads its
/// tree: the `id`, each attribute in place (by a ``JSONTextRecord`` over `attributes`), and each
/// relationship's linkage read without a tree.
///
/// Only the ordinary resource object is read: members whose keys have no escapes, each given once,
/// a string `type` of the model and a string `id`, linkage of the shapes the specification allows.
/// Anything else is ``RecordMember/undecided`` (or an error), and its reader reads the tree with
/// ``JSONAPIRecord`` instead, which decides and reports exactly as for any other document.
package struct JSONAPITextRecord: InPlaceRecordSource {
    private let resource: JSONTextValue
    private let keys: RecordKeys
    private let layout: JSONAPILayout
    private let coder: FieldCoder
    /// In the resource object, at the member after the one read last.
    private var cursor: JSONCursor
    /// The attributes, while their members are handed out.
    private var attributes: JSONTextRecord?
    private var attributesValue: JSONTextValue?
    /// The fields read from relationships' linkage, handed out one by one from ``handedOut``.
    private var linkage: [(index: Int, value: JSONValue)] = []
    private var handedOut = 0
    /// The member handed out last: from `attributes`, else this value.
    private var current: JSONValue = .null
    private var isCurrentAttribute = false
    /// The members of the resource object met so far, by ``Member``'s bits: each may be given once.
    private var met: UInt8 = 0
    private var id = ""
    private var isDone = false
    /// Where the resource object ends, once read to its end.
    package private(set) var end = 0

    /// The members of a resource object read here; the others are stepped over.
    private enum Member: UInt8 {
        case type = 1
        case id = 2
        case attributes = 4
        case relationships = 8
        case other = 0
    }

    /// The tree decides what a resource object read here cannot.
    private struct TreeDecides: Error {}

    /// A source over the resource object at `resource`, or `nil` when it is not an object or is
    /// nested too deep.
    package init?(_ resource: JSONTextValue, keys: RecordKeys, layout: JSONAPILayout, coder: FieldCoder) {
        guard resource.cursor.current == UInt8(ascii: "{"), resource.depth < resource.maxDepth else { return nil }
        self.resource = resource
        self.keys = keys
        self.layout = layout
        self.coder = coder
        self.cursor = resource.cursor
        cursor.offset += 1
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "}") {
            isDone = true
            end = cursor.offset + 1
        }
    }

    package mutating func nextMember() throws -> RecordMember? {
        while true {
            if handedOut < linkage.count {
                let (index, value) = linkage[handedOut]
                handedOut += 1
                current = value
                isCurrentAttribute = false
                return .field(index)
            }
            if attributes != nil {
                switch try attributes?.nextMember() {
                case .field(let index)?:
                    // A relationship's key among the attributes is no field of the record.
                    guard case .attribute = layout.places[index] else { continue }
                    isCurrentAttribute = true
                    return .field(index)
                case .version?:
                    isCurrentAttribute = true
                    return .version
                case .id?, .unknown?:
                    continue
                case .undecided?:
                    return .undecided
                case nil:
                    cursor.offset = attributes?.end ?? cursor.offset
                    attributes = nil
                    try stepToNextMember()
                    continue
                }
            }
            if isDone {
                guard met & (Member.type.rawValue | Member.id.rawValue) == 3 else { return .undecided }
                return nil
            }
            guard let key = try key() else { return .undecided }
            let member: Member =
                if key.elementsEqual("type".utf8) {
                    .type
                } else if key.elementsEqual("id".utf8) {
                    .id
                } else if key.elementsEqual("attributes".utf8) {
                    .attributes
                } else if key.elementsEqual("relationships".utf8) {
                    .relationships
                } else {
                    .other
                }
            // Given twice: the tree keeps the last.
            guard met & member.rawValue == 0 else { return .undecided }
            met |= member.rawValue
            let value = JSONTextValue(
                bytes: resource.bytes, offset: cursor.offset, maxDepth: resource.maxDepth, depth: resource.depth + 1)
            switch member {
            case .type:
                let type = try string()
                guard layout.types.contains(type) || layout.types.contains(JSONAPIDocument.normalized(type)) else {
                    throw TreeDecides()
                }
                try stepToNextMember()
            case .id:
                id = try string()
                guard !id.isEmpty else { throw TreeDecides() }
                current = .string(id)
                isCurrentAttribute = false
                try stepToNextMember()
                return .id
            case .attributes:
                if value.isNull {
                    try cursor.expectLiteral("null")
                    try stepToNextMember()
                } else {
                    guard let record = JSONTextRecord(value, keys: keys, coder: coder) else { throw TreeDecides() }
                    attributes = record
                    attributesValue = value
                }
            case .relationships:
                if value.isNull {
                    try cursor.expectLiteral("null")
                } else {
                    try readRelationships()
                }
                try stepToNextMember()
            case .other:
                try cursor.skipValue(depth: resource.depth + 1)
                try stepToNextMember()
            }
        }
    }

    package var value: FieldSource {
        if isCurrentAttribute, let attributes { return attributes.value }
        return FieldSource(current)
    }

    /// The record under the model's wire keys, as a record cache keeps it and ``JSONAPIRecord``
    /// makes it: made only when asked for, once every member was read without an error.
    package func wire(keyOrder: [String]) -> WireRecord {
        var flat: [String: JSONValue] = [keys.id: .string(id)]
        if let attributesValue {
            _ = try? attributesValue.walkMembers { key, value in
                let index = keys.fields.firstIndex(of: key)
                let isField = index.map { if case .attribute = layout.places[$0] { true } else { false } } ?? false
                guard isField || key == keys.version else { return nil }
                let (tree, end) = try value.parse()
                flat[key] = tree
                return end
            }
        }
        for (index, value) in linkage { flat[keys.fields[index]] = value }
        return .tree(.object(flat), keyOrder: keyOrder)
    }

    // MARK: - Reading the text

    /// Reads a member's key and the colon after it, leaving the cursor at the value; `nil` for a key
    /// the tree decides (with escapes), or no key.
    private mutating func key() throws -> UnsafeBufferPointer<UInt8>? {
        guard cursor.current == UInt8(ascii: "\"") else { return nil }
        let start = cursor.offset + 1
        guard try !cursor.skipString() else { return nil }
        let key = UnsafeBufferPointer(rebasing: resource.bytes[start..<(cursor.offset - 1)])
        cursor.skipWhitespace()
        guard cursor.current == UInt8(ascii: ":") else { return nil }
        cursor.offset += 1
        cursor.skipWhitespace()
        guard cursor.current != nil else { return nil }
        return key
    }

    /// Moves past the comma after a member, or the brace that closes the resource object.
    private mutating func stepToNextMember() throws {
        cursor.skipWhitespace()
        switch cursor.continues(closing: UInt8(ascii: "}")) {
        case true?: break
        case false?:
            isDone = true
            end = cursor.offset
        case nil: throw TreeDecides()
        }
    }

    /// The string at the cursor, moving past it.
    private mutating func string() throws -> String {
        guard cursor.current == UInt8(ascii: "\"") else { throw TreeDecides() }
        return try cursor.parseString()
    }

    /// Reads the `relationships` object at the cursor: the linkage of each relationship a field
    /// reads becomes those fields' values; the others are stepped over.
    private mutating func readRelationships() throws {
        // Which of the layout's relationships were met, a bit each: one given twice is the tree's
        // to decide, which keeps the last (as are the 65th and later of a model that has them).
        var met: UInt64 = 0
        try walkObject(depth: resource.depth + 1) { record, name, depth in
            guard let position = record.layout.relationships.firstIndex(where: { $0.name.elementsEqual(name) }) else {
                try record.cursor.skipValue(depth: depth)
                return
            }
            guard position < 64, met & (1 << position) == 0 else { throw TreeDecides() }
            met |= 1 << position
            let relationship = record.layout.relationships[position]
            if record.cursor.current == UInt8(ascii: "n") {
                // A relationship of `null` says nothing of its linkage.
                try record.cursor.expectLiteral("null")
                return
            }
            var data: JSONAPILinkage?
            try record.walkObject(depth: depth) { record, member, depth in
                guard member.elementsEqual("data".utf8) else {
                    try record.cursor.skipValue(depth: depth)
                    return
                }
                guard data == nil else { throw TreeDecides() }
                data = try record.readLinkage(depth: depth)
            }
            // A relationship with links and no data says nothing of its linkage either.
            guard let data else { return }
            for index in relationship.fields {
                let value = try record.layout.value(of: record.layout.places[index], from: data) { _ in
                    APIError(.decodingFailed, "the tree decides")
                }
                record.linkage.append((index, value))
            }
        }
    }

    /// Reads `null`, a resource identifier or an array of them at the cursor.
    private mutating func readLinkage(depth: Int) throws -> JSONAPILinkage {
        switch cursor.current {
        case UInt8(ascii: "n"):
            try cursor.expectLiteral("null")
            return .null
        case UInt8(ascii: "{"):
            return .one(try readIdentifier(depth: depth))
        case UInt8(ascii: "["):
            guard depth + 1 <= resource.maxDepth else { throw TreeDecides() }
            cursor.offset += 1
            cursor.skipWhitespace()
            var identifiers: [JSONAPIIdentifier] = []
            if cursor.current == UInt8(ascii: "]") {
                cursor.offset += 1
                return .many(identifiers)
            }
            while true {
                identifiers.append(try readIdentifier(depth: depth + 1))
                cursor.skipWhitespace()
                guard let more = cursor.continues(closing: UInt8(ascii: "]")) else { throw TreeDecides() }
                if !more { return .many(identifiers) }
            }
        default:
            throw TreeDecides()
        }
    }

    /// Reads a resource identifier object at the cursor: a non-empty string `type` and `id`.
    private mutating func readIdentifier(depth: Int) throws -> JSONAPIIdentifier {
        guard cursor.current == UInt8(ascii: "{") else { throw TreeDecides() }
        var type: String?
        var id: String?
        try walkObject(depth: depth) { record, key, depth in
            if key.elementsEqual("type".utf8) {
                guard type == nil else { throw TreeDecides() }
                type = try record.string()
            } else if key.elementsEqual("id".utf8) {
                guard id == nil else { throw TreeDecides() }
                id = try record.string()
            } else {
                try record.cursor.skipValue(depth: depth)
            }
        }
        guard let type, !type.isEmpty, let id, !id.isEmpty else { throw TreeDecides() }
        return (type, id)
    }

    /// Walks the object at the cursor: `member` reads each value (at `depth`, the nesting of the
    /// values) and moves the cursor past it. Leaves the cursor after the closing brace.
    private mutating func walkObject(
        depth: Int, _ member: (inout Self, UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        guard cursor.current == UInt8(ascii: "{"), depth + 1 <= resource.maxDepth else { throw TreeDecides() }
        cursor.offset += 1
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "}") {
            cursor.offset += 1
            return
        }
        while true {
            guard let key = try key() else { throw TreeDecides() }
            try member(&self, key, depth + 1)
            cursor.skipWhitespace()
            guard let more = cursor.continues(closing: UInt8(ascii: "}")) else { throw TreeDecides() }
            if !more { return }
        }
    }
}
