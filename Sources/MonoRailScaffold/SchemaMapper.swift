import MonoRailClient

/// The Swift type a field is declared with.
indirect enum FieldType: Hashable {
    case bool, int, double, decimal, string, uuid, url, json
    case date(dateOnly: Bool)
    case array(FieldType)
    /// An enum or a struct the scaffold writes.
    case named(String)
    /// A model.
    case resource(String)

    var swift: String {
        switch self {
        case .bool: "Bool"
        case .int: "Int"
        case .double: "Double"
        case .decimal: "Decimal"
        case .string: "String"
        case .uuid: "UUID"
        case .url: "URL"
        case .json: "JSONValue"
        case .date: "Date"
        case .array(let element): "[\(element.swift)]"
        case .named(let name), .resource(let name): name
        }
    }
}

/// What a schema says of one value: its type, whether it may be null, and its default.
struct FieldShape: Hashable {
    var type: FieldType
    var isNullable: Bool
    /// The schema's `default`, as a Swift literal of the type, when it has one the type can take.
    var defaultLiteral: String?
}

/// An enum or a struct a field needs: a schema's `enum`, or an object that is not a record.
enum SupportType {
    case enumeration(name: String, rawType: String, cases: [(name: String, literal: String)])
    case structure(name: String, fields: [(property: String, key: String, type: String, isOptional: Bool)])

    var name: String {
        switch self {
        case .enumeration(let name, _, _), .structure(let name, _): name
        }
    }
}

/// Maps JSON Schema to Swift types: formats, enums, nullability in OpenAPI 3.0's and 3.1's spellings,
/// references to records and to other schemas. Every walk is bounded, so a cyclic or absurd schema
/// ends as `JSONValue`, never a hang.
struct SchemaMapper {
    let document: OpenAPIDocument
    /// Model names by the component schema that describes their records.
    let resources: [String: String]
    /// Support types written so far, in the order first needed.
    private(set) var supportTypes: [SupportType] = []
    /// Every type name taken: models and support types.
    var takenTypeNames: Set<String>
    /// Support type names by component schema name, or by the inline name they were made for.
    private var named: [String: String] = [:]
    /// Structs whose fields are being mapped: one met again inside itself is kept as `JSONValue`, since
    /// a struct cannot hold itself.
    private var building: Set<String> = []
    private(set) var warnings: [String] = []

    /// How deep arrays and structs nest before a value is kept as `JSONValue`.
    static let maximumDepth = 8
    /// How many `allOf`/`anyOf`/`$ref` steps are taken to find a value's type.
    static let maximumUnwrapping = 16

    init(document: OpenAPIDocument, resources: [String: String]) {
        self.document = document
        self.resources = resources
        takenTypeNames = Set(resources.values)
    }

    /// The properties of an object schema (following `$ref` and `allOf`), sorted by key, with
    /// whether each is required.
    func properties(of schema: JSONValue) -> [(key: String, schema: JSONValue, isRequired: Bool)] {
        var found: [String: (JSONValue, Bool)] = [:]
        collectProperties(of: schema, into: &found, depth: 0)
        return found.keys.sorted().compactMap { key in found[key].map { (key, $0.0, $0.1) } }
    }

    private func collectProperties(of schema: JSONValue, into found: inout [String: (JSONValue, Bool)], depth: Int) {
        guard depth < Self.maximumUnwrapping else { return }
        let resolved = document.resolved(schema)
        let required = Set(resolved["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        if case .object(let properties)? = resolved["properties"] {
            for (key, value) in properties {
                let isRequired = required.contains(key) || (found[key]?.1 ?? false)
                found[key] = (value, isRequired)
            }
        }
        for part in resolved["allOf"]?.arrayValue ?? [] {
            collectProperties(of: part, into: &found, depth: depth + 1)
        }
    }

    /// The shape of a field's schema; `name` names an enum or struct made for it inline.
    mutating func shape(of schema: JSONValue, name: String, depth: Int = 0) -> FieldShape {
        var current = schema
        var isNullable = false
        var referenced: String?
        for _ in 0..<Self.maximumUnwrapping {
            if current["nullable"] == .bool(true) { isNullable = true }
            if let schemaName = document.schemaName(of: current) {
                if let model = resources[schemaName] {
                    return FieldShape(type: .resource(model), isNullable: isNullable)
                }
                referenced = schemaName
                current = document.resolved(current)
                if current["nullable"] == .bool(true) { isNullable = true }
                continue
            }
            current = document.resolved(current)
            let alternatives = (current["anyOf"] ?? current["oneOf"])?.arrayValue
            if let alternatives {
                let present = alternatives.filter { !Self.isNull(document.resolved($0)) }
                if present.count < alternatives.count { isNullable = true }
                if present.count == 1, let only = present.first {
                    current = only
                    continue
                }
                // Pydantic's decimal as input: a number or a string of digits.
                let types = Set(present.compactMap { document.resolved($0)["type"]?.stringValue })
                if !present.isEmpty, types == ["number", "string"] || types == ["string", "number", "integer"] {
                    return FieldShape(type: .decimal, isNullable: isNullable)
                }
                return FieldShape(type: .json, isNullable: isNullable)
            }
            if let all = current["allOf"]?.arrayValue, all.count == 1, let only = all.first {
                current = only
                continue
            }
            break
        }
        var type = current["type"]
        if case .array(let types) = type {
            let named = types.compactMap(\.stringValue)
            if named.contains("null") { isNullable = true }
            let present = named.filter { $0 != "null" }
            type = present.count == 1 ? .string(present[0]) : nil
            if present.count > 1 { return FieldShape(type: .json, isNullable: isNullable) }
        }
        let typeName = referenced.map(SwiftNames.typeName) ?? SwiftNames.typeName(name)
        if case .array(let values)? = current["enum"], !values.isEmpty {
            let present = values.filter { $0 != .null }
            if present.count < values.count { isNullable = true }
            if let made = enumeration(present, name: typeName, key: referenced ?? "enum:\(name)") {
                return FieldShape(
                    type: .named(made), isNullable: isNullable,
                    defaultLiteral: enumDefault(current["default"], in: made))
            }
            return FieldShape(type: .json, isNullable: isNullable)
        }
        let format = current["format"]?.stringValue?.lowercased()
        let defaultValue = current["default"]
        switch type?.stringValue {
        case "boolean":
            return FieldShape(
                type: .bool, isNullable: isNullable, defaultLiteral: defaultValue?.boolValue.map { "\($0)" })
        case "integer":
            return FieldShape(
                type: .int, isNullable: isNullable, defaultLiteral: defaultValue?.intValue.map { "\($0)" })
        case "number":
            if format == "decimal" { return FieldShape(type: .decimal, isNullable: isNullable) }
            return FieldShape(
                type: .double, isNullable: isNullable,
                defaultLiteral: defaultValue?.doubleValue.flatMap { $0.isFinite ? "\($0)" : nil })
        case "string":
            return FieldShape(
                type: Self.stringType(format: format, pattern: current["pattern"]?.stringValue), isNullable: isNullable,
                defaultLiteral: Self.stringType(format: format, pattern: nil) == .string
                    ? defaultValue?.stringValue.map(Self.stringLiteral) : nil)
        case "array":
            guard depth < Self.maximumDepth, let items = current["items"] else {
                return FieldShape(type: .array(.json), isNullable: isNullable)
            }
            let element = shape(of: items, name: name, depth: depth + 1)
            let isEmptyDefault = defaultValue?.arrayValue?.isEmpty == true
            return FieldShape(
                type: .array(element.isNullable ? .json : element.type), isNullable: isNullable,
                defaultLiteral: isEmptyDefault ? "[]" : nil)
        case "object", nil:
            guard current["properties"] != nil, depth < Self.maximumDepth else {
                return FieldShape(type: .json, isNullable: isNullable)
            }
            let made = structure(current, name: typeName, key: referenced ?? "struct:\(name)", depth: depth)
            return FieldShape(type: made.map(FieldType.named) ?? .json, isNullable: isNullable)
        default:
            return FieldShape(type: .json, isNullable: isNullable)
        }
    }

    static func stringType(format: String?, pattern: String?) -> FieldType {
        switch format {
        case "date": return .date(dateOnly: true)
        case "date-time": return .date(dateOnly: false)
        case "uuid": return .uuid
        case "uri", "url", "iri", "uri-reference": return .url
        case "decimal": return .decimal
        default:
            // Pydantic writes a decimal's output as a string with a pattern of digits and a point.
            if let pattern, pattern.contains("\\d"), pattern.contains("\\.") { return .decimal }
            return .string
        }
    }

    static func isNull(_ schema: JSONValue) -> Bool {
        schema["type"]?.stringValue == "null" || schema["enum"] == .array([.null])
    }

    static func stringLiteral(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    literal += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    literal.unicodeScalars.append(scalar)
                }
            }
        }
        return literal + "\""
    }

    // MARK: - Support types

    /// An enum for string or integer values; `nil` for values of mixed or other types.
    private mutating func enumeration(_ values: [JSONValue], name: String, key: String) -> String? {
        if let made = named[key] { return made }
        let cases: [(String, String)]
        let rawType: String
        if values.allSatisfy({ $0.stringValue != nil }) {
            rawType = "String"
            var taken: Set<String> = []
            cases = values.compactMap(\.stringValue).map { value in
                var name = SwiftNames.propertyName(value)
                if SwiftNames.reservedCaseNames.contains(name) { name += "Value" }
                return (SwiftNames.unique(name, in: &taken), Self.stringLiteral(value))
            }
        } else if values.allSatisfy({ $0.intValue != nil }) {
            rawType = "Int"
            var taken: Set<String> = []
            cases = values.compactMap(\.intValue).map { value in
                let name = value < 0 ? "minus\(value.magnitude)" : "value\(value)"
                return (SwiftNames.unique(name, in: &taken), "\(value)")
            }
        } else {
            return nil
        }
        let typeName = SwiftNames.unique(name, in: &takenTypeNames)
        named[key] = typeName
        supportTypes.append(.enumeration(name: typeName, rawType: rawType, cases: cases))
        return typeName
    }

    private func enumDefault(_ value: JSONValue?, in typeName: String) -> String? {
        guard let value, case .enumeration(_, _, let cases)? = supportTypes.first(where: { $0.name == typeName }) else {
            return nil
        }
        let literal = value.stringValue.map(Self.stringLiteral) ?? value.intValue.map { "\($0)" }
        return cases.first { $0.literal == literal }.map { "." + SwiftNames.escaped($0.name) }
    }

    /// A struct for an object that is not a record; `nil` when it has no property.
    private mutating func structure(_ schema: JSONValue, name: String, key: String, depth: Int) -> String? {
        guard !building.contains(key) else { return nil }
        if let made = named[key] { return made }
        building.insert(key)
        defer { building.remove(key) }
        let typeName = SwiftNames.unique(name, in: &takenTypeNames)
        named[key] = typeName
        var fields: [(String, String, String, Bool)] = []
        var taken: Set<String> = []
        for (propertyKey, propertySchema, isRequired) in properties(of: schema) {
            let property = SwiftNames.unique(SwiftNames.propertyName(propertyKey), in: &taken)
            var field = shape(of: propertySchema, name: property, depth: depth + 1)
            if case .resource = field.type { field.type = .json }
            fields.append((property, propertyKey, field.type.swift, !isRequired || field.isNullable))
        }
        guard !fields.isEmpty else {
            named[key] = nil
            takenTypeNames.remove(typeName)
            return nil
        }
        supportTypes.append(.structure(name: typeName, fields: fields))
        return typeName
    }

    mutating func warn(_ message: String) { warnings.append(message) }
}
