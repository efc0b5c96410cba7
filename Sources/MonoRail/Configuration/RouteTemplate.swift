/// A path template for one action, such as `/:plural/:id` or `/post/:id.json`.
///
/// Placeholders start with `:` and run over letters, digits and underscores: `:path` (the model's
/// collection path, `/trains`), `:plural`, `:singular`, `:id` and `:term` (the search term). Values are
/// percent-encoded as one path segment each, so an id can never change the path.
///
/// A placeholder may end with a colon, as ApiModel writes it: `/post/:id:.json` gives `/post/5.json`.
public struct RouteTemplate: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    enum Part: Sendable, Hashable {
        case literal(String)
        case placeholder(String)
    }

    /// The template as written.
    public let template: String
    let parts: [Part]

    /// Creates a template.
    public init(_ template: String) {
        self.template = template
        var parts: [Part] = []
        var literal = ""
        var index = template.startIndex
        while index < template.endIndex {
            let character = template[index]
            let next = template.index(after: index)
            if character == ":", next < template.endIndex, Self.isNameCharacter(template[next]) {
                if !literal.isEmpty { parts.append(.literal(literal)) }
                literal = ""
                var end = next
                while end < template.endIndex, Self.isNameCharacter(template[end]) { end = template.index(after: end) }
                parts.append(.placeholder(String(template[next..<end])))
                // ApiModel closes a placeholder with a colon (`/post/:id:.json`); a colon that starts
                // no name is that closing mark, not text.
                if end < template.endIndex, template[end] == ":" {
                    let after = template.index(after: end)
                    if after == template.endIndex || !Self.isNameCharacter(template[after]) { end = after }
                }
                index = end
            } else {
                literal.append(character)
                index = next
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
    }

    /// Creates a template from a literal.
    public init(stringLiteral value: String) { self.init(value) }

    /// The template as written.
    public var description: String { template }

    /// The placeholder names in the template.
    public var placeholders: [String] {
        parts.compactMap { if case .placeholder(let name) = $0 { name } else { nil } }
    }

    /// Fills the placeholders.
    ///
    /// - Parameter values: Each placeholder's value; `:path` is inserted verbatim (it is already a
    ///   path), every other value is percent-encoded as a single segment.
    /// - Returns: The path, or `nil` when a placeholder has no value.
    public func expand(_ values: [String: String]) -> APIPath? {
        expand { values[$0] }
    }

    /// Fills the placeholders with what `value` gives for each name; as ``expand(_:)``.
    func expand(_ value: (String) -> String?) -> APIPath? {
        var path = ""
        for part in parts {
            switch part {
            case .literal(let text): path += text
            case .placeholder(let name):
                guard let value = value(name) else { return nil }
                path += name == "path" ? value : APIPath.encodeSegment(value)
            }
        }
        return APIPath(verbatim: path)
    }

    /// The template as OpenTelemetry's `url.template` writes it, under `base` (the API root's path):
    /// the model's own names filled, every other placeholder in braces — `/api/trains/{id}`.
    func urlTemplate(base: String, path: String, plural: String, singular: String) -> String {
        var text = base
        for part in parts {
            switch part {
            case .literal(let literal): text += literal
            case .placeholder("path"): text += path
            case .placeholder("plural"): text += plural
            case .placeholder("singular"): text += singular
            case .placeholder(let name): text += "{\(name)}"
            }
        }
        return text
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character == "_" || (character.isASCII && (character.isLetter || character.isNumber))
    }
}

/// The route of each action a model supports.
public struct ResourceRoutes: Sendable, Hashable {
    /// `GET`, with filter parameters in the query. Default `:path`.
    public var index: RouteTemplate
    /// `GET` one record. Default `:path/:id`.
    public var show: RouteTemplate
    /// `POST` a new record. Default `:path`.
    public var create: RouteTemplate
    /// Update a record (`PUT` by default). Default `:path/:id`.
    public var update: RouteTemplate
    /// `DELETE` a record. Default `:path/:id`.
    public var destroy: RouteTemplate
    /// `GET` a search; when the template has no `:term`, the term goes in the query. Default `:path`.
    public var search: RouteTemplate

    /// Creates routes.
    public init(
        index: RouteTemplate = ":path", show: RouteTemplate = ":path/:id", create: RouteTemplate = ":path",
        update: RouteTemplate = ":path/:id", destroy: RouteTemplate = ":path/:id", search: RouteTemplate = ":path"
    ) {
        self.index = index
        self.show = show
        self.create = create
        self.update = update
        self.destroy = destroy
        self.search = search
    }

    /// Rails: `/trains`, `/trains/1`.
    public static let rails = ResourceRoutes()

    /// Django REST framework: `/trains/`, `/trains/1/`.
    public static let djangoREST = ResourceRoutes(
        index: ":path/", show: ":path/:id/", create: ":path/", update: ":path/:id/", destroy: ":path/:id/",
        search: ":path/")

    /// A singleton resource, one record at one path with no id: Rails' singular resource
    /// (`resource :profile`) and ApiModel's `ApiRoutes.resource("/user.json")`. Read it with
    /// ``ResourceModel/current(include:parameters:in:)``; `save()` and `delete()` use the same path.
    ///
    /// ```swift
    /// static func configure(_ configuration: inout MonoRail.Configuration) {
    ///     configuration.conventions.routes = .singleton("/user/avatar.json")
    /// }
    /// ```
    public static func singleton(_ path: RouteTemplate) -> ResourceRoutes {
        ResourceRoutes(index: path, show: path, create: path, update: path, destroy: path, search: path)
    }

    /// Objects, as its README lists them: singular paths, `/train/`, `/train/1`, searches as
    /// `/train/<term>`, and deletes as `DELETE /train/` with the id in the body (the preset's
    /// ``ServerConventions/sendsIDInBody``). For a server that takes the id in a delete's path,
    /// set `routes.destroy = "/:singular/:id"`.
    public static let objects = ResourceRoutes(
        index: "/:singular/", show: "/:singular/:id", create: "/:singular/", update: "/:singular/",
        destroy: "/:singular/", search: "/:singular/:term")
}
