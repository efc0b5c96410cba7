package import Foundation

/// What reads a document's primary resource objects where they lie and keeps them, for
/// ``JSONAPIDocument/inPlace(_:maxDepth:typeName:keepsRelationships:reader:)``: the model layer's
/// record collector.
package protocol ResourceObjectReader: AnyObject {
    /// Reads the resource object at `resource` and keeps it, in place when it can, else from its
    /// tree; returns where it ends.
    ///
    /// - Throws: The error the resource object read from its tree raises.
    func readResource(_ resource: JSONTextValue, path: String, index: Int) throws -> Int
}

extension JSONAPIDocument {
    /// Reads a list's document where it lies: each primary resource object by `reader`, the other
    /// top-level members (`included`, `links`, `meta`, `jsonapi`) as trees, each checked as the
    /// tree's reader checks it.
    ///
    /// Returns `nil` when the document is to be read as a tree, which then decides and reports
    /// exactly as for any other document: not an object, primary data that is not an array, a
    /// top-level member given twice, a resource object that fails, anything after the document.
    ///
    /// - Parameter keepsRelationships: Whether ``data`` keeps each primary resource object's
    ///   `type`, `id` and `relationships`, for what is read of them after the merge; else it keeps
    ///   none, and ``primaryType`` alone says the type.
    package static func inPlace(
        _ body: Data, maxDepth: Int, typeName: String, keepsRelationships: Bool, reader: some ResourceObjectReader
    ) -> JSONAPIDocument? {
        body.withUnsafeBytes { raw -> JSONAPIDocument? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var cursor = JSONCursor(bytes, maxDepth: maxDepth)
            cursor.skipWhitespace()
            let whole = JSONTextValue(bytes: bytes, offset: cursor.offset, maxDepth: maxDepth, depth: 0)
            guard whole.isObject else { return nil }
            var members: [String: JSONValue] = [:]
            var data: [JSONValue] = []
            var primaryType: String?
            var sawData = false
            do {
                let end = try whole.walkMembers { key, value in
                    // Given twice: the tree keeps the last.
                    guard members[key] == nil, !(sawData && key == "data") else { throw Stop() }
                    guard key == "data" else {
                        let (tree, end) = try value.parse()
                        members[key] = tree
                        return end
                    }
                    sawData = true
                    guard value.isArray else { throw Stop() }
                    return try value.walkElements { index, resource in
                        let end = try reader.readResource(resource, path: dataPath, index: index)
                        if index == 0 || keepsRelationships {
                            let kept = try identityAndRelationships(of: resource)
                            if index == 0 { primaryType = kept["type"]?.stringValue }
                            if keepsRelationships { data.append(kept) }
                        }
                        return end
                    }
                }
                guard sawData, whole.endsBody(at: end) else { return nil }
                let included = try group(members["included"], typeName: typeName)
                return JSONAPIDocument(data: data, primaryType: primaryType, included: included, members: members)
            } catch {
                return nil
            }
        }
    }

    /// The `type`, `id` and `relationships` of a resource object the reader has read, each the last
    /// given, as the tree keeps them.
    private static func identityAndRelationships(of resource: JSONTextValue) throws -> JSONValue {
        var kept: [String: JSONValue] = [:]
        _ = try resource.walkMembers { key, value in
            guard key == "type" || key == "id" || key == "relationships" else { return nil }
            let (tree, end) = try value.parse()
            kept[key] = tree
            return end
        }
        return .object(kept)
    }
}
