/// The `ServerConventions` an API's shape amounts to, as Swift source: a preset, the settings that
/// differ from it, and what single models do differently.
struct Conventions {
    /// `fastAPI`, `djangoREST` or `rails`.
    let preset: String
    /// Assignments to a `conventions` variable, such as `updateMethod = .put`.
    private(set) var settings: [String] = []
    /// The paging most lists use, which the settings give every model.
    let paging: APIShape.PagingShape?

    init(_ shape: APIShape) {
        let home = shape.resources.filter { !$0.isNested }
        let measured = home.isEmpty ? shape.resources : home
        let slashed = measured.filter(\.hasTrailingSlash).count * 2 > measured.count
        let wrapped = measured.filter(\.wrapsRequestBody).count * 2 > measured.count
        preset = slashed ? "djangoREST" : wrapped ? "rails" : "fastAPI"
        paging = Self.mostCommon(measured.compactMap(\.paging))
        var settings: [String] = []
        if slashed, wrapped { settings.append("wrapsRequestBody = true") }
        let patching = measured.filter { $0.methods.contains("item-patch") }
        let putting = measured.filter { $0.methods.contains("item-put") }
        if patching.count >= putting.count, !patching.isEmpty {
            let partial = patching.allSatisfy(\.patchIsPartial)
            settings.append("updateMethod = .patch")
            settings.append("sendsOnlyChanges = \(partial)")
        } else if !putting.isEmpty {
            settings.append("updateMethod = .put")
            settings.append("sendsOnlyChanges = false")
        }
        let parameters = Set(measured.flatMap(\.listParameters))
        if let order = ["ordering", "order_by", "sort_by", "sort", "order"].first(where: parameters.contains) {
            settings.append("orderParameter = \(SchemaMapper.stringLiteral(order))")
        }
        if let search = ["search", "q", "query"].first(where: parameters.contains) {
            settings.append("searchParameter = \(SchemaMapper.stringLiteral(search))")
        }
        if parameters.contains(where: { $0.contains("__") }) {
            settings.append("filterStyle = .lookups")
        } else if parameters.contains(where: { $0.contains("[") }) {
            settings.append("filterStyle = .brackets")
        }
        if !shape.validationStatuses.isEmpty {
            settings.append(
                "validationStatuses = [\(shape.validationStatuses.sorted().map(String.init).joined(separator: ", "))]")
        }
        // A list inside `{"data": [...]}` rather than DRF's `results` or fastapi-pagination's `items`.
        let listKeys = ["results", "items"]
        let others = measured.compactMap(\.paging?.listKey).filter { !listKeys.contains($0) }
        if preset != "rails", !others.isEmpty {
            let keys = (listKeys + Set(others).sorted()).map(SchemaMapper.stringLiteral)
            settings.append("listKeys = [\(keys.joined(separator: ", "))]")
        }
        if let paging { settings.append("paging = \(Self.source(paging, indent: 8))") }
        self.settings = settings
    }

    /// What a model's `configure(_:)` says: its own paging, and routes when it lives only under
    /// another resource.
    func modelConfiguration(for resource: APIShape.Resource) -> [String] {
        var lines: [String] = []
        // A list with no paging documented keeps the API's: a query pages only when asked to.
        if let own = resource.paging, own != paging {
            lines.append("configuration.conventions.paging = \(Self.source(own, indent: 8))")
        }
        if resource.isNested {
            let slash = resource.hasTrailingSlash ? "/" : ""
            let template = Self.template(resource.collectionPath)
            lines.append("configuration.conventions.routes.index = \(SchemaMapper.stringLiteral(template + slash))")
            lines.append("configuration.conventions.routes.create = \(SchemaMapper.stringLiteral(template + slash))")
            if resource.itemParameter != nil {
                let item = SchemaMapper.stringLiteral(template + "/:id" + slash)
                lines.append("configuration.conventions.routes.show = \(item)")
                lines.append("configuration.conventions.routes.update = \(item)")
                lines.append("configuration.conventions.routes.destroy = \(item)")
            }
        }
        return lines
    }

    /// `/authors/{author_id}/books` → `/authors/:author_id/books`.
    static func template(_ path: String) -> String {
        "/"
            + path.split(separator: "/").map { segment in
                APIShape.isParameter(String(segment)) ? ":" + APIShape.parameterName(String(segment)) : String(segment)
            }.joined(separator: "/")
    }

    /// A `Paging` value as source, its arguments on a line of their own, `indent` spaces in.
    static func source(_ paging: APIShape.PagingShape, indent: Int) -> String {
        var arguments: [String] = []
        switch paging.style {
        case .offsets(let limit, let offset)?:
            arguments.append(
                "style: .offsets(limit: \(SchemaMapper.stringLiteral(limit)), offset: \(SchemaMapper.stringLiteral(offset)))"
            )
        case .pageNumbers(let page, let size)?:
            arguments.append(
                "style: .pageNumbers(page: \(SchemaMapper.stringLiteral(page)), size: \(SchemaMapper.stringLiteral(size)))"
            )
        case .cursor(let parameter, let size, let key)?:
            arguments.append(
                "style: .cursor(parameter: \(SchemaMapper.stringLiteral(parameter)), "
                    + "size: \(SchemaMapper.stringLiteral(size)), nextCursorKey: \(key.map(SchemaMapper.stringLiteral) ?? "nil"))"
            )
        case nil:
            // An envelope with no parameters documented: numbered pages, asked for only when a query pages.
            arguments.append("style: .pageNumbers(page: \"page\", size: \"per_page\")")
        }
        if let total = paging.totalKey { arguments.append("totalCountKey: \(SchemaMapper.stringLiteral(total))") }
        if let next = paging.nextKey { arguments.append("nextKey: \(SchemaMapper.stringLiteral(next))") }
        let padding = String(repeating: " ", count: indent + 4)
        return "Paging(\n" + padding + arguments.joined(separator: ", ") + ")"
    }

    /// The value that occurs most, the first of equals; `nil` for none.
    static func mostCommon(_ values: [APIShape.PagingShape]) -> APIShape.PagingShape? {
        var counts: [APIShape.PagingShape: Int] = [:]
        for value in values { counts[value, default: 0] += 1 }
        var best: (value: APIShape.PagingShape?, count: Int) = (nil, 0)
        for value in values where (counts[value] ?? 0) > best.count { best = (value, counts[value] ?? 0) }
        return best.value
    }
}
