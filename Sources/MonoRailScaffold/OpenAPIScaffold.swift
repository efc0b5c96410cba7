import Foundation
import MonoRailClient

/// Writes `@Resource` models and one configuration from an OpenAPI document: the engine of
/// `monorail scaffold --openapi`.
struct OpenAPIScaffold {
    let document: OpenAPIDocument
    let shape: APIShape
    let access: Scaffold.Access
    /// The API's name in Swift: the document's title as a type name.
    let apiName: String

    init(document: OpenAPIDocument, access: Scaffold.Access) {
        self.document = document
        self.shape = APIShape(document)
        self.access = access
        var name = SwiftNames.typeName(document.title ?? "API")
        if shape.resources.contains(where: { $0.typeName == name }) { name += "API" }
        self.apiName = name
    }

    var modifier: String { access == .internal ? "" : access.rawValue + " " }

    func files() throws(Scaffold.Failure) -> Scaffold.Output {
        guard !shape.resources.isEmpty else {
            throw Scaffold.Failure(
                "the document describes no resource: no path answers a GET or POST with a record (an object "
                    + "schema under components/schemas), so there is no model to write "
                    + "(\(document.paths.count) paths read)")
        }
        let models = Dictionary(shape.resources.map { ($0.schemaName, $0.typeName) }) { first, _ in first }
        var mapper = SchemaMapper(document: document, resources: models)
        mapper.takenTypeNames.insert(apiName)
        let conventions = Conventions(shape)
        var files: [Scaffold.File] = []
        for resource in shape.resources {
            let before = mapper.supportTypes.count
            let declarations =
                ([modelSource(resource, conventions: conventions, mapper: &mapper)]
                + mapper.supportTypes[before...].map(render)).joined(separator: "\n\n")
            let source = header(for: resource.typeName, body: declarations) + "\n\n" + declarations + "\n"
            files.append(Scaffold.File(name: resource.typeName + ".swift", contents: source))
        }
        files.append(Scaffold.File(name: apiName + "Configuration.swift", contents: configurationSource(conventions)))
        for file in files { try Scaffold.check(file) }
        return Scaffold.Output(files: files, warnings: mapper.warnings)
    }

    /// The comment and imports that start a file whose declarations are `body`.
    private func header(for subject: String, body: String) -> String {
        let from = document.title.map { " from \"\(Self.comment($0))\"" } ?? ""
        // Declarations seen outside the module need their imports seen too (InternalImportsByDefault);
        // an import no declaration needs is a warning there, so Foundation comes only when used.
        let foundation = ["Date", "URL", "UUID", "Decimal"].contains {
            body.contains(": \($0)") || body.contains("[\($0)]")
        }
        return """
            // \(subject): written by `monorail scaffold --openapi`\(from). Edit freely; scaffold again to compare.
            \(foundation ? "\(modifier)import Foundation\n" : "")\(modifier)import MonoRail
            """
    }

    /// Text safe inside a line comment.
    static func comment(_ text: String) -> String {
        String(
            text.unicodeScalars.filter { $0.value >= 0x20 && $0 != "\u{7F}" && $0 != "\u{2028}" && $0 != "\u{2029}" }
                .prefix(100).map(Character.init))
    }

    // MARK: - Models

    private func modelSource(
        _ resource: APIShape.Resource, conventions: Conventions, mapper: inout SchemaMapper
    ) -> String {
        var lines: [String] = []
        let schema = document.schemas[resource.schemaName] ?? .object([:])
        var properties = mapper.properties(of: schema)
        // Fields only a request body shows (a password, a write-only reference) are fields too.
        for request in resource.requestSchemas {
            for property in mapper.properties(of: request) where !properties.contains(where: { $0.key == property.key })
            {
                properties.append((property.key, property.schema, false))
            }
        }
        let primaryKey = Self.primaryKey(of: resource, among: properties.map(\.key))
        var arguments: [String] = []
        let segment = resource.collectionPath.split(separator: "/").last.map(String.init) ?? ""
        let defaultPath = "/" + Inflector.english.pluralize(KeyMapping.snakeCased(resource.typeName))
        if !resource.isNested, resource.collectionPath != defaultPath {
            arguments.append("path: \(SchemaMapper.stringLiteral(resource.collectionPath))")
        }
        if resource.isNested, segment != Inflector.english.pluralize(KeyMapping.snakeCased(resource.typeName)) {
            arguments.append("plural: \(SchemaMapper.stringLiteral(segment))")
        }
        if primaryKey != "id" { arguments.append("primaryKey: \(SchemaMapper.stringLiteral(primaryKey))") }
        lines.append("@Resource" + (arguments.isEmpty ? "" : "(\(arguments.joined(separator: ", ")))"))
        lines.append("\(modifier)final class \(resource.typeName) {")
        var taken = SwiftNames.reservedPropertyNames
        for (key, propertySchema, _) in properties where key != primaryKey {
            let field = fieldDeclaration(key: key, schema: propertySchema, mapper: &mapper, taken: &taken)
            lines.append("    " + field)
            if field.contains(": JSONValue"), let reason = Self.untyped(propertySchema, in: document) {
                mapper.warn("\(resource.typeName).\(key) is kept as JSONValue: \(reason)")
            }
        }
        for nested in resource.nested {
            let property = SwiftNames.unique(nested.property, in: &taken)
            lines.append(
                "    @Has(route: \(SchemaMapper.stringLiteral(nested.route))) \(modifier)var \(SwiftNames.escaped(property)): [\(nested.target)]"
            )
        }
        let configuration = conventions.modelConfiguration(for: resource)
        if !configuration.isEmpty {
            lines.append("")
            lines.append("    \(modifier)static func configure(_ configuration: inout MonoRail.Configuration) {")
            lines += configuration.map { "        " + $0 }
            lines.append("    }")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The key the records are known by: `id`, else the item path's parameter when a field has its
    /// name (`/books/{isbn}`).
    static func primaryKey(of resource: APIShape.Resource, among keys: [String]) -> String {
        if keys.contains("id") { return "id" }
        if let parameter = resource.itemParameter, keys.contains(parameter) { return parameter }
        return "id"
    }

    private func fieldDeclaration(
        key: String, schema: JSONValue, mapper: inout SchemaMapper, taken: inout Set<String>
    ) -> String {
        var shape = mapper.shape(of: schema, name: key)
        if let reference = referenceDeclaration(key: key, shape: shape, models: mapper.resources, taken: &taken) {
            return reference
        }
        let property = SwiftNames.unique(SwiftNames.propertyName(key), in: &taken)
        let keyMatches = keyMapping.wireKey(for: property) == key
        let name = SwiftNames.escaped(property)
        switch shape.type {
        case .resource(let model):
            let key = keyMatches ? "" : ", key: \(SchemaMapper.stringLiteral(key))"
            return "@Has(.embedsOne\(key)) \(modifier)var \(name): \(model)?"
        case .array(.resource(let model)):
            let key = keyMatches ? "" : ", key: \(SchemaMapper.stringLiteral(key))"
            return "@Has(.embedsMany\(key)) \(modifier)var \(name): [\(model)]"
        default:
            break
        }
        var attributes: [String] = []
        if case .date(dateOnly: true) = shape.type {
            attributes.append(
                keyMatches
                    ? "@Field(transform: .dateOnly)"
                    : "@Field(key: \(SchemaMapper.stringLiteral(key)), transform: .dateOnly)")
        } else if !keyMatches {
            attributes.append("@Field(key: \(SchemaMapper.stringLiteral(key)))")
        }
        if case .array = shape.type, shape.defaultLiteral == nil, !shape.isNullable { shape.defaultLiteral = "[]" }
        let declaration =
            if let literal = shape.defaultLiteral, !shape.isNullable {
                "var \(name): \(shape.type.swift) = \(literal)"
            } else {
                "var \(name): \(shape.type.swift)?"
            }
        return (attributes + [modifier + declaration]).joined(separator: " ")
    }

    /// How keys map to properties: camelCase APIs keep their keys, others are snake_case.
    private var keyMapping: KeyMapping { shape.usesCamelCaseKeys ? .identity : .snakeCase }

    /// `author_id` (or `authorId` in a camelCase API) holding an id, when there is an `Author` model:
    /// `@References var author: Author?`.
    private func referenceDeclaration(
        key: String, shape: FieldShape, models: [String: String], taken: inout Set<String>
    ) -> String? {
        let suffix = key.hasSuffix("_id") ? 3 : self.shape.usesCamelCaseKeys && key.hasSuffix("Id") ? 2 : 0
        guard suffix > 0, [.int, .string, .uuid].contains(shape.type) else { return nil }
        let stem = String(key.dropLast(suffix))
        guard let target = models.values.first(where: { $0 == SwiftNames.typeName(stem) }) else { return nil }
        let property = SwiftNames.unique(SwiftNames.propertyName(stem), in: &taken)
        let keyArgument =
            keyMapping.wireKey(for: property) + "_id" == key ? "" : "(key: \(SchemaMapper.stringLiteral(key)))"
        return "@References\(keyArgument) \(modifier)var \(SwiftNames.escaped(property)): \(target)?"
    }

    /// Why a field's schema has no one Swift type, when it says something: `nil` for a schema that
    /// asks for any JSON (`{}`, a free-form object).
    static func untyped(_ schema: JSONValue, in document: OpenAPIDocument) -> String? {
        if let reference = schema["$ref"]?.stringValue, document.lookUp(reference) == nil {
            return "it refers to \(reference), which the document does not have"
        }
        let resolved = document.resolved(schema)
        let alternatives = (resolved["oneOf"] ?? resolved["anyOf"])?.arrayValue ?? []
        let present = alternatives.filter { !SchemaMapper.isNull(document.resolved($0)) }
        if present.count > 1 { return "it is one of \(present.count) schemas with no one Swift type" }
        if resolved["enum"] != nil { return "its values are of mixed types" }
        return nil
    }

    // MARK: - Support types

    private func render(_ type: SupportType) -> String {
        switch type {
        case .enumeration(let name, let rawType, let cases):
            var lines = ["\(modifier)enum \(name): \(rawType), Codable, Sendable, CaseIterable {"]
            for (caseName, literal) in cases {
                lines.append("    case \(SwiftNames.escaped(caseName)) = \(literal)")
            }
            lines.append("}")
            return lines.joined(separator: "\n")
        case .structure(let name, let fields):
            let mapping = shape.usesCamelCaseKeys ? KeyMapping.identity : KeyMapping.snakeCase
            var lines = ["\(modifier)struct \(name): Codable, Sendable, Hashable {"]
            for field in fields {
                lines.append(
                    "    \(modifier)var \(SwiftNames.escaped(field.property)): \(field.type)\(field.isOptional ? "?" : "")"
                )
            }
            if fields.contains(where: { mapping.wireKey(for: $0.property) != $0.key }) {
                lines.append("")
                lines.append("    enum CodingKeys: String, CodingKey {")
                for field in fields {
                    lines.append(
                        "        case \(SwiftNames.escaped(field.property)) = \(SchemaMapper.stringLiteral(field.key))")
                }
                lines.append("    }")
            }
            let parameters = fields.map {
                "\(SwiftNames.escaped($0.property)): \($0.type)\($0.isOptional ? "? = nil" : "")"
            }
            lines.append("")
            lines.append("    \(modifier)init(\(parameters.joined(separator: ", "))) {")
            for field in fields {
                let property = SwiftNames.escaped(field.property)
                lines.append("        self.\(property) = \(property)")
            }
            lines.append("    }")
            lines.append("}")
            return lines.joined(separator: "\n")
        }
    }

    // MARK: - Configuration

    private func configurationSource(_ conventions: Conventions) -> String {
        let property = SwiftNames.escaped(SwiftNames.propertyName(apiName))
        let title = document.title.map { "\"\(Self.comment($0))\"" } ?? "The API"
        var lines = [header(for: "The configuration of \(apiName)", body: ": URL"), ""]
        lines.append("extension ServerConventions {")
        lines.append("    /// \(title), as its OpenAPI document describes it.")
        lines.append("    \(modifier)static let \(property): ServerConventions = {")
        lines.append("        var conventions = ServerConventions.\(conventions.preset)")
        lines += conventions.settings.map { "        conventions.\($0)" }
        lines.append("        return conventions")
        lines.append("    }()")
        lines.append("}")
        lines.append("")
        lines.append("extension MonoRail.Configuration {")
        lines.append("    /// Points this configuration at \(title): its API root, its conventions and its key style.")
        lines.append("    ///")
        lines.append("    /// ```swift")
        lines.append(
            "    /// MonoRail.configure { $0.use\(apiName)(apiRootURL: URL(string: \"http://127.0.0.1:8000\")!) }")
        lines.append("    /// ```")
        lines.append("    \(modifier)mutating func use\(apiName)(apiRootURL: URL) {")
        lines.append("        self.apiRootURL = apiRootURL")
        lines.append("        conventions = .\(property)")
        if shape.usesCamelCaseKeys { lines.append("        coding.keyMapping = .identity") }
        lines.append("    }")
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}
