import Foundation

/// Reads `application/x-www-form-urlencoded` bodies and Rails bracket names back into a tree, as
/// Rack does: `train[company]=DB` → `{"train": {"company": "DB"}}`, `train[tags][]=a` → an array,
/// and `cars[][occupancy]=1&cars[][occupancy]=2` → an array of two objects. Every value is a
/// string; the reader decides what it means.
///
/// ```swift
/// FormDecoder.decode("train%5Bcompany%5D=DB&train%5Btags%5D%5B%5D=a")
/// // ["train": ["company": "DB", "tags": ["a"]]]
/// ```
public enum FormDecoder {
    /// The deepest bracket nesting read (Rack's default); deeper names are ignored.
    public static let maxDepth = 100

    /// Decodes a form body.
    public static func decode(_ body: String) -> JSONValue {
        tree(
            from: body.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
            })
    }

    /// Builds a tree from `(name, value)` pairs with bracket names, in order.
    public static func tree(from pairs: [(String, String)]) -> JSONValue {
        tree(fromValues: pairs.map { ($0.0, JSONValue.string($0.1)) })
    }

    /// Builds a tree from names and any values, such as the parts of a multipart body where file
    /// parts stand as objects.
    public static func tree(fromValues pairs: [(String, JSONValue)]) -> JSONValue {
        let root = FormNode()
        root.object = [:]
        for (name, value) in pairs {
            let path = keys(of: name)
            // A pair without a name (`=x`) names nothing; as the root it would turn the form into a list.
            // Names nested deeper than Rack's limit are dropped, so hostile input cannot recurse deeply.
            guard let first = path.first, !first.isEmpty, path.count <= maxDepth else { continue }
            insert(value, at: path[...], into: root)
        }
        return root.json
    }

    /// `train[tags][]` → `["train", "tags", ""]`.
    static func keys(of name: String) -> [String] {
        guard let open = name.firstIndex(of: "[") else { return [name] }
        var keys = [String(name[..<open])]
        var rest = name[open...]
        while rest.first == "[", let close = rest.firstIndex(of: "]") {
            keys.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return keys
    }

    private static func insert(_ value: JSONValue, at path: ArraySlice<String>, into node: FormNode) {
        guard let key = path.first else {
            node.value = value
            (node.object, node.array) = (nil, nil)
            return
        }
        let rest = path.dropFirst()
        if key.isEmpty {
            // An array: `[]` alone appends; `[][name]` starts a new object when the last one
            // already has `name`, as Rack does.
            if node.array == nil { (node.object, node.array) = (nil, []) }
            if let next = rest.first, !next.isEmpty, let last = node.array?.last, let fields = last.object,
                fields[next] == nil
            {
                insert(value, at: rest, into: last)
            } else {
                let element = FormNode()
                element.object = [:]
                insert(value, at: rest, into: element)
                node.array?.append(element)
            }
            return
        }
        if node.object == nil { (node.object, node.array) = ([:], nil) }
        let child: FormNode
        if let existing = node.object?[key] {
            child = existing
        } else {
            child = FormNode()
            if rest.first == "" { child.array = [] } else { child.object = [:] }
            node.object?[key] = child
        }
        insert(value, at: rest, into: child)
    }

    /// Decodes `+` and percent escapes; malformed escapes are kept as they are.
    public static func unescape(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

/// A form tree under construction. Nodes are objects so that adding a pair changes one container
/// in place: rebuilding `JSONValue`s copied every array and object on the way down for each pair,
/// which made `a[]=v&` × 64,000 take 41 s.
private final class FormNode {
    var value: JSONValue = .null
    var object: [String: FormNode]?
    var array: [FormNode]?

    var json: JSONValue {
        if let object { return .object(object.mapValues(\.json)) }
        if let array { return .array(array.map(\.json)) }
        return value
    }
}
