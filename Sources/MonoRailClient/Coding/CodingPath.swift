/// A key or index on the wire, as it appears in the JSON (after key mapping).
public struct WireKey: CodingKey, Sendable, Hashable {
    /// The key, or the index as text.
    public var stringValue: String
    /// The index, for array elements.
    public var intValue: Int?

    /// A member key.
    public init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    /// An array index.
    public init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    /// Renders coding paths as JSON paths: `$.trains[3].depot.city`.
    public static func jsonPath(_ path: [any CodingKey]) -> String {
        var text = "$"
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += "." + key.stringValue
            }
        }
        return text
    }
}

/// The path to the value being decoded or encoded, as a linked list so that descending costs one
/// small allocation and no array copy.
final class PathNode {
    let parent: PathNode?
    let key: WireKey

    init(parent: PathNode?, key: WireKey) {
        self.parent = parent
        self.key = key
    }

    static func keys(of node: PathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = node
        while let current = node {
            keys.append(current.key)
            node = current.parent
        }
        return keys.reversed()
    }
}
