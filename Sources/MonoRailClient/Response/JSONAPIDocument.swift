/// A JSON:API 1.1 document as a response carries it: its primary data, the resource objects
/// `included` beside it, grouped by type, and its `links` and `meta`; checked as the specification
/// requires before anything of it is merged.
///
/// ```swift
/// let document = try JSONAPIDocument(body, expecting: .many, typeName: "Article")
/// document.data            // the primary resource objects
/// document.included        // [(type: "people", resources: [...])]
/// ```
package struct JSONAPIDocument {
    /// The media type of JSON:API documents, sent as `Content-Type` and asked for in `Accept`.
    package static let mediaType = "application/vnd.api+json"
    /// The URI of the Atomic Operations extension, named in the media type's `ext` parameter.
    package static let atomicExtension = "https://jsonapi.org/ext/atomic"

    /// What the primary data of a request's answer must be.
    package enum Expecting {
        /// A resource object (or `null`): the answer to a read of one record or a write.
        case one
        /// An array of resource objects: a list.
        case many
    }

    /// Resource objects of one type, as `included` listed them.
    package struct Group {
        /// The `type` as the document wrote it.
        package var type: String
        /// The resource objects, each with its place in `included`.
        package var resources: [(index: Int, resource: JSONValue)]
    }

    /// The primary resource objects: one for ``Expecting/one`` (none for `data: null`), the list's
    /// for ``Expecting/many``. A document read in place keeps of each only its `type`, `id` and
    /// `relationships`, and only when asked to (``inPlace(_:maxDepth:typeName:keepsRelationships:reader:)``).
    package var data: [JSONValue]
    /// The `type` the first primary resource object names.
    package var primaryType: String?
    /// The included resource objects by type, in the order their types first appear; a resource
    /// object listed twice with the same members is kept once.
    package var included: [Group]
    /// The document's top-level members, where paging reads `links.next` and `meta`; read in place,
    /// all but `data`.
    package var members: [String: JSONValue]

    /// Where the primary data sits, for errors.
    package static let dataPath = "$.data"
    /// Where included resource objects sit, for errors.
    package static let includedPath = "$.included"

    /// Reads a document.
    ///
    /// - Throws: ``APIError`` with ``APIError/Code/decodingFailed`` for a body that is no JSON:API
    ///   document, primary data of the wrong kind for the request, an included resource object with
    ///   no string `type` or `id`, or one type and id listed twice with different members.
    package init(_ body: JSONValue, expecting: Expecting, typeName: String) throws {
        guard case .object(let members) = body else {
            throw Self.failure(typeName, "a JSON:API document is an object, found \(body.kind)", path: "$")
        }
        self.members = members
        switch (members["data"], expecting) {
        case (.object?, .one):
            data = [members["data"] ?? .null]
        case (.null?, .one):
            data = []
        case (.array(let list)?, .many):
            data = list
        case (nil, _):
            throw Self.failure(typeName, "the document has no primary data (\"data\")", path: "$", key: "data")
        case (let found?, .one):
            throw Self.failure(
                typeName, "expected one resource object (or null) as the primary data, found \(found.kind)",
                path: Self.dataPath)
        case (let found?, .many):
            throw Self.failure(
                typeName, "expected an array of resource objects as the primary data, found \(found.kind)",
                path: Self.dataPath)
        }
        included = try Self.group(members["included"], typeName: typeName)
        if case .string(let type)? = data.first?["type"] { primaryType = type }
    }

    init(data: [JSONValue], primaryType: String?, included: [Group], members: [String: JSONValue]) {
        self.data = data
        self.primaryType = primaryType
        self.included = included
        self.members = members
    }

    static func group(_ value: JSONValue?, typeName: String) throws -> [Group] {
        guard let value, value != .null else { return [] }
        guard case .array(let resources) = value else {
            throw failure(typeName, "\"included\" must be an array, found \(value.kind)", path: includedPath)
        }
        var groups: [Group] = []
        var groupOfType: [String: Int] = [:]
        // Where each type and id was first listed, to keep one of each and refuse two that differ.
        var seen: [String: [String: Int]] = [:]
        for (index, resource) in resources.enumerated() {
            let path = "\(includedPath)[\(index)]"
            let (type, id) = try identity(of: resource, at: path, typeName: typeName)
            if let first = seen[type]?[id] {
                guard resources[first] == resource else {
                    throw failure(
                        typeName,
                        "the resource \(type) \"\(id)\" is included twice with different members (also at \(includedPath)[\(first)])",
                        path: path)
                }
                continue
            }
            seen[type, default: [:]][id] = index
            if let position = groupOfType[type] {
                groups[position].resources.append((index, resource))
            } else {
                groupOfType[type] = groups.count
                groups.append(Group(type: type, resources: [(index, resource)]))
            }
        }
        return groups
    }

    /// The `type` and `id` of a resource object in a response, both required strings.
    package static func identity(of resource: JSONValue, at path: String, typeName: String) throws -> (
        type: String, id: String
    ) {
        guard case .object(let members) = resource else {
            throw failure(typeName, "a resource object must be an object, found \(resource.kind)", path: path)
        }
        guard case .string(let type)? = members["type"], !type.isEmpty else {
            throw failure(typeName, "the resource object has no \"type\" string", path: path, key: "type")
        }
        switch members["id"] {
        case .string(let id)? where !id.isEmpty:
            return (type, id)
        case nil:
            let also = members["lid"] == nil ? "" : " (a \"lid\" names a resource only inside a request)"
            throw failure(typeName, "the resource object has no \"id\"\(also)", path: path, key: "id")
        case let id?:
            throw failure(
                typeName, "a resource object's \"id\" must be a non-empty string, found \(id)", path: path, key: "id")
        }
    }

    /// A resource identifier object as a request names a resource: `{"type": "people", "id": "9"}`,
    /// or `{"type": "people", "lid": "…"}` for a resource the same request creates.
    package static func identifier(type: String, id: String, isLocal: Bool = false) -> JSONValue {
        ["type": .string(type), (isLocal ? "lid" : "id"): .string(id)]
    }

    /// A type as reading compares it: lower-cased, without dashes and underscores, so `train-cars`,
    /// `train_cars` and `TrainCars` name one model.
    package static func normalized(_ type: String) -> String {
        String(type.lowercased().unicodeScalars.filter { $0 != "-" && $0 != "_" })
    }

    static func failure(_ typeName: String, _ reason: String, path: String, key: String? = nil) -> APIError {
        let detail = DecodingFailure(
            typeName: typeName, key: key, path: path + (key.map { ".\($0)" } ?? ""), reason: reason)
        return APIError(decodingFailure: detail)
    }

}
