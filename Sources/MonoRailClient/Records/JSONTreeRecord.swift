/// A record held as a tree: its id, then its fields in schema order, so the first bad field of a
/// record is always the same one.
package struct JSONTreeRecord: RecordSource {
    private let object: [String: JSONValue]
    private let keys: RecordKeys
    /// The record as received, before a model's hook rewrote it.
    private let received: JSONValue
    /// The next field to look for; -1 before the id.
    private var next = -1
    private var current: JSONValue = .null

    /// A source over `record`, or `nil` when it is not an object.
    ///
    /// - Parameter received: The record as it came, when a hook rewrote it into `record`.
    package init?(_ record: JSONValue, keys: RecordKeys, received: JSONValue? = nil) {
        guard case .object(let object) = record else { return nil }
        self.object = object
        self.keys = keys
        self.received = received ?? record
    }

    package mutating func nextMember() -> RecordMember? {
        if next < 0 {
            next = 0
            if let id = object[keys.id] {
                current = id
                return .id
            }
        }
        while next < keys.count {
            defer { next += 1 }
            if let value = object[keys.fields[next]] {
                current = value
                return .field(next)
            }
        }
        if next == keys.count {
            next += 1
            if let version = keys.version, let value = object[version] {
                current = value
                return .version
            }
        }
        return nil
    }

    package var value: FieldSource { FieldSource(current) }

    package func wire(keyOrder: [String]) -> WireRecord { .tree(received, keyOrder: keyOrder) }
}
