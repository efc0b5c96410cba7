import MonoRailClient

/// What an OpenAPI document says of an API's resources and conventions: which schemas are records,
/// at which paths, written how, listed in which pages.
struct APIShape {
    /// One resource: a record schema served at a collection path.
    struct Resource {
        /// The component schema of its records.
        var schemaName: String
        /// The Swift class name.
        var typeName: String
        /// The collection's path without a trailing slash: `/books`, or a nested `/authors/{author_id}/books`.
        var collectionPath: String
        /// The path parameter of its item path: `book_id`.
        var itemParameter: String?
        var hasTrailingSlash = false
        var methods: Set<String> = []
        /// Schemas of the bodies its create and update send, for fields the record does not show.
        var requestSchemas: [JSONValue] = []
        /// Whether `PATCH` takes a body whose fields are all optional.
        var patchIsPartial = false
        /// Whether bodies sent are wrapped in the singular name (`{"book": {…}}`).
        var wrapsRequestBody = false
        var paging: PagingShape?
        /// Relationships at nested routes: `/authors/{author_id}/books` lists books of an author.
        var nested: [(property: String, target: String, route: String)] = []
        /// The list GET's query parameters.
        var listParameters: [String] = []

        var isNested: Bool { collectionPath.contains("{") }
    }

    /// How a list is paged.
    struct PagingShape: Hashable {
        enum Style: Hashable {
            case pageNumbers(page: String, size: String)
            case offsets(limit: String, offset: String)
            case cursor(parameter: String, size: String, nextCursorKey: String?)
        }
        var style: Style?
        /// The member holding the records, when a list comes in an envelope.
        var listKey: String?
        var totalKey: String?
        var nextKey: String?
    }

    var title: String?
    var resources: [Resource] = []
    /// Whether the document's error answers are FastAPI's `{"detail": [...]}`.
    var hasFastAPIErrors = false
    /// Statuses the document answers with a body of validation errors.
    var validationStatuses: Set<Int> = []
    /// Whether most keys are camelCase rather than snake_case.
    var usesCamelCaseKeys = false

    static let methods = ["get", "post", "put", "patch", "delete"]

    /// Reads the shape of the API a document describes.
    init(_ document: OpenAPIDocument) {
        title = document.title
        var bySchema: [String: Resource] = [:]
        var schemaOrder: [String] = []
        var nestedLists: [(ownerPath: String, ownerParameter: String, segment: String, schema: String, slash: Bool)] =
            []
        let paths = document.paths
        for (path, item) in paths {
            let (segments, slash) = Self.segments(path)
            guard let last = segments.last else { continue }
            let isItem = Self.isParameter(last)
            let collectionSegments = isItem ? Array(segments.dropLast()) : segments
            guard let name = collectionSegments.last, !Self.isParameter(name) else { continue }
            let collection = "/" + collectionSegments.joined(separator: "/")
            for method in Self.methods {
                guard let operation = item[method].map(document.resolved)?.objectValue else { continue }
                for status in [400, 422] where Self.response(operation, status: status, in: document) != nil {
                    validationStatuses.insert(status)
                    if let schema = Self.response(operation, status: status, in: document),
                        document.resolved(schema)["properties"]?["detail"] != nil
                    {
                        hasFastAPIErrors = true
                    }
                }
                guard let schemaName = Self.recordSchema(of: operation, method: method, isItem: isItem, in: document)
                else { continue }
                let owners = collectionSegments.dropLast()
                if !isItem, method == "get", let parameterIndex = owners.lastIndex(where: Self.isParameter),
                    parameterIndex == owners.index(before: owners.endIndex), parameterIndex > owners.startIndex
                {
                    // `/authors/{author_id}/books`: a relationship of the owner, and a route of the record.
                    let ownerPath = "/" + owners[..<parameterIndex].joined(separator: "/")
                    nestedLists.append(
                        (ownerPath, Self.parameterName(owners[parameterIndex]), name, schemaName, slash))
                }
                var resource =
                    bySchema[schemaName]
                    ?? Resource(schemaName: schemaName, typeName: "", collectionPath: collection)
                if bySchema[schemaName] == nil { schemaOrder.append(schemaName) }
                // A top-level collection is the resource's home; a nested one only when it has none.
                if resource.isNested, !collection.contains("{") {
                    resource.collectionPath = collection
                    resource.methods = []
                }
                guard resource.collectionPath == collection else {
                    bySchema[schemaName] = resource
                    continue
                }
                resource.hasTrailingSlash = resource.hasTrailingSlash || slash
                resource.methods.insert(isItem ? "item-\(method)" : method)
                if isItem { resource.itemParameter = Self.parameterName(last) }
                read(operation, method: method, isItem: isItem, into: &resource, document: document)
                bySchema[schemaName] = resource
            }
        }
        var taken: Set<String> = []
        var typeNames: [String: String] = [:]
        for schemaName in schemaOrder {
            guard var resource = bySchema[schemaName] else { continue }
            let segment = resource.collectionPath.split(separator: "/").last.map(String.init) ?? schemaName
            let fromPath = SwiftNames.typeName(Inflector.english.singularize(segment))
            resource.typeName = SwiftNames.unique(
                taken.contains(fromPath) ? SwiftNames.typeName(schemaName) : fromPath, in: &taken)
            typeNames[schemaName] = resource.typeName
            resources.append(resource)
        }
        for nested in nestedLists {
            guard let target = typeNames[nested.schema],
                let owner = resources.firstIndex(where: { $0.collectionPath == nested.ownerPath })
            else { continue }
            let route = ":path/:id/\(nested.segment)\(nested.slash ? "/" : "")"
            let property = SwiftNames.propertyName(nested.segment)
            guard !resources[owner].nested.contains(where: { $0.property == property }) else { continue }
            resources[owner].nested.append((property, target, route))
        }
        usesCamelCaseKeys = Self.camelCase(resources, in: document)
    }

    // MARK: - Operations

    private mutating func read(
        _ operation: [String: JSONValue], method: String, isItem: Bool, into resource: inout Resource,
        document: OpenAPIDocument
    ) {
        if method == "post" || method == "put" || method == "patch",
            let body = Self.requestBody(operation, in: document)
        {
            let resolved = document.resolved(body)
            let segment = resource.collectionPath.split(separator: "/").last.map(String.init) ?? resource.schemaName
            let singular = KeyMapping.snakeCased(Inflector.english.singularize(segment))
            if let properties = resolved["properties"]?.objectValue, properties.count == 1,
                let wrapped = properties.keys.first, wrapped == singular
            {
                resource.wrapsRequestBody = true
                resource.requestSchemas.append(properties[wrapped] ?? body)
            } else {
                resource.requestSchemas.append(body)
            }
            if method == "patch" {
                resource.patchIsPartial = (resolved["required"]?.arrayValue ?? []).isEmpty
            }
        }
        guard method == "get", !isItem else { return }
        let parameters = Self.parameters(of: operation, in: document)
        resource.listParameters = parameters
        var paging = PagingShape()
        paging.style = Self.pagingStyle(parameters)
        if let list = Self.response(operation, status: 200, in: document) {
            let resolved = document.resolved(list)
            if let properties = resolved["properties"]?.objectValue {
                paging.listKey = properties.keys.sorted().first { key in
                    properties[key].map { document.resolved($0)["type"]?.stringValue == "array" } ?? false
                }
                paging.totalKey = ["total", "count", "total_count", "totalCount", "total_items"].first {
                    properties[$0] != nil
                }
                paging.nextKey = ["next", "next_url", "nextPage", "next_page"].first { properties[$0] != nil }
                if case .cursor(let parameter, let size, nil)? = paging.style {
                    let key = ["next_cursor", "nextCursor", "next_page_token", "nextPageToken", "cursor"].first {
                        properties[$0] != nil
                    }
                    paging.style = .cursor(parameter: parameter, size: size, nextCursorKey: key)
                }
            }
        }
        if paging.style != nil || paging.listKey != nil { resource.paging = paging }
    }

    static func pagingStyle(_ parameters: [String]) -> PagingShape.Style? {
        let names = Set(parameters)
        let size = ["size", "page_size", "per_page", "pageSize", "perPage", "limit"].first { names.contains($0) }
        if names.contains("limit"), names.contains("offset") { return .offsets(limit: "limit", offset: "offset") }
        if names.contains("page"), let size { return .pageNumbers(page: "page", size: size) }
        if let cursor = ["cursor", "after", "starting_after", "page_token", "pageToken"].first(where: names.contains) {
            return .cursor(parameter: cursor, size: size ?? "limit", nextCursorKey: nil)
        }
        return nil
    }

    /// The component schema of the record an operation reads or writes, if it is one.
    static func recordSchema(
        of operation: [String: JSONValue], method: String, isItem: Bool, in document: OpenAPIDocument
    ) -> String? {
        guard let body = response(operation, status: method == "post" ? 201 : 200, in: document) else { return nil }
        if isItem || method != "get" { return objectSchema(body, in: document) }
        // A list: an array of records, or an envelope with one.
        let resolved = document.resolved(body)
        if resolved["type"]?.stringValue == "array", let items = resolved["items"] {
            return objectSchema(items, in: document)
        }
        guard let properties = resolved["properties"]?.objectValue else { return nil }
        for key in properties.keys.sorted() {
            guard let value = properties[key] else { continue }
            let list = document.resolved(value)
            if list["type"]?.stringValue == "array", let items = list["items"],
                let name = objectSchema(items, in: document)
            {
                return name
            }
        }
        return nil
    }

    /// The name of the component object schema `schema` refers to, also through a wrapping
    /// `{"book": {$ref}}`, a lone `allOf`, or a nullable `anyOf`.
    static func objectSchema(_ schema: JSONValue, in document: OpenAPIDocument) -> String? {
        var current = schema
        for _ in 0..<SchemaMapper.maximumUnwrapping {
            if let name = document.schemaName(of: current) {
                let resolved = document.resolved(current)
                if resolved["properties"] != nil || resolved["allOf"] != nil {
                    if let properties = resolved["properties"]?.objectValue, properties.count == 1,
                        let inner = properties.values.first, let wrapped = document.schemaName(of: inner)
                    {
                        return wrapped
                    }
                    return name
                }
                return nil
            }
            let parts = (current["allOf"] ?? current["anyOf"] ?? current["oneOf"])?.arrayValue ?? []
            let present = parts.filter { !SchemaMapper.isNull(document.resolved($0)) }
            if present.count == 1, let only = present.first {
                current = only
                continue
            }
            if let properties = current["properties"]?.objectValue, properties.count == 1,
                let inner = properties.values.first
            {
                current = inner
                continue
            }
            return nil
        }
        return nil
    }

    /// The JSON schema of a response with `status` (or any 2xx for a success), if it has one.
    static func response(_ operation: [String: JSONValue], status: Int, in document: OpenAPIDocument) -> JSONValue? {
        guard let responses = operation["responses"]?.objectValue else { return nil }
        var candidates = [String(status)]
        if (200..<300).contains(status) { candidates += ["200", "201", "2XX", "2xx", "default"] }
        for code in candidates {
            guard let response = responses[code].map(document.resolved) else { continue }
            if let schema = jsonSchema(in: response, document: document) { return schema }
        }
        return nil
    }

    static func requestBody(_ operation: [String: JSONValue], in document: OpenAPIDocument) -> JSONValue? {
        operation["requestBody"].map(document.resolved).flatMap { jsonSchema(in: $0, document: document) }
    }

    /// The schema of a response or request body's JSON content.
    private static func jsonSchema(in body: JSONValue, document: OpenAPIDocument) -> JSONValue? {
        guard let content = body["content"]?.objectValue else { return nil }
        let type = content.keys.sorted().first { $0.lowercased().contains("json") }
        return type.flatMap { content[$0]?["schema"] }
    }

    /// The names of an operation's query parameters.
    static func parameters(of operation: [String: JSONValue], in document: OpenAPIDocument) -> [String] {
        (operation["parameters"]?.arrayValue ?? []).compactMap { parameter in
            let resolved = document.resolved(parameter)
            guard resolved["in"]?.stringValue == "query" else { return nil }
            return resolved["name"]?.stringValue
        }
    }

    // MARK: - Paths

    static func segments(_ path: String) -> (segments: [String], trailingSlash: Bool) {
        (path.split(separator: "/").map(String.init), path.count > 1 && path.hasSuffix("/"))
    }

    static func isParameter(_ segment: String) -> Bool {
        segment.hasPrefix("{") && segment.hasSuffix("}")
    }

    static func parameterName(_ segment: String) -> String {
        String(segment.dropFirst().dropLast())
    }

    /// Whether the records' keys are mostly camelCase.
    private static func camelCase(_ resources: [Resource], in document: OpenAPIDocument) -> Bool {
        var camel = 0
        var snake = 0
        for resource in resources {
            guard let schema = document.schemas[resource.schemaName] else { continue }
            for key in document.resolved(schema)["properties"]?.objectValue?.keys ?? [:].keys {
                if key.contains("_") {
                    snake += 1
                } else if key.unicodeScalars.contains(where: { $0.properties.isUppercase }) {
                    camel += 1
                }
            }
        }
        return camel > snake
    }
}
