import Foundation
import MonoRailClient

/// The models found in a sample, with the fields inferred for each.
struct ModelSet {
    struct Model {
        var name: String
        /// Wire key → what its values looked like, in first-seen order.
        var keys: [String] = []
        var shapes: [String: Shape] = [:]
    }

    private(set) var models: [Model] = []
    private var referenced: [String] = []

    mutating func add(_ name: String, records: [[String: JSONValue]]) {
        let position = index(of: name)
        for record in records {
            for key in record.keys.sorted() where key != "id" {
                guard let value = record[key] else { continue }
                if models[position].shapes[key] == nil { models[position].keys.append(key) }
                let shape = Shape(value, key: key, into: &self)
                models[position].shapes[key] = models[position].shapes[key].map { $0.merged(with: shape) } ?? shape
            }
        }
    }

    private mutating func index(of name: String) -> Int {
        if let existing = models.firstIndex(where: { $0.name == name }) { return existing }
        models.append(Model(name: name))
        return models.count - 1
    }

    mutating func reference(_ name: String) {
        if !referenced.contains(name) { referenced.append(name) }
    }

    func render() -> String {
        var lines = ["import Foundation", "import MonoRail", ""]
        var all = models
        for name in referenced where !all.contains(where: { $0.name == name }) { all.append(Model(name: name)) }
        for (position, model) in all.enumerated() {
            if position > 0 { lines.append("") }
            lines.append("@Resource")
            lines.append("final class \(model.name) {")
            for key in model.keys {
                guard let shape = model.shapes[key] else { continue }
                lines.append("    " + shape.declaration(key: key))
            }
            lines.append("}")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// What the values of one key looked like.
indirect enum Shape: Equatable {
    case null
    case bool, int, double, string, date
    case array(Shape)
    case model(String)
    case reference(String)
    case references(String)
    case json

    init(_ value: JSONValue, key: String, into models: inout ModelSet) {
        let inflector = Inflector.english
        switch value {
        case .null: self = .null
        case .bool: self = .bool
        case .int, .uint:
            self = key.hasSuffix("_id") ? .reference(Scaffold.typeName(String(key.dropLast(3)))) : .int
        case .double: self = .double
        case .string(let string):
            if key.hasSuffix("_id") {
                self = .reference(Scaffold.typeName(String(key.dropLast(3))))
            } else if DateFormat.defaults.contains(where: { $0.date(from: string) != nil }) {
                self = .date
            } else {
                self = .string
            }
        case .object(let object) where object["id"] != nil:
            let name = Scaffold.typeName(inflector.singularize(key))
            models.add(name, records: [object])
            self = .model(name)
        case .object:
            // Without an id it is a value, not a record: kept as free-form JSON.
            self = .json
        case .array(let array):
            if key.hasSuffix("_ids"), array.allSatisfy({ $0.intValue != nil || $0.stringValue != nil }) {
                self = .references(Scaffold.typeName(String(key.dropLast(4))))
            } else if !array.isEmpty, array.allSatisfy({ $0.objectValue?["id"] != nil }) {
                let name = Scaffold.typeName(inflector.singularize(key))
                models.add(name, records: array.compactMap(\.objectValue))
                self = .array(.model(name))
            } else {
                let element = array.map { Shape($0, key: "", into: &models) }.reduce(Shape.null) { $0.merged(with: $1) }
                self = .array(element)
            }
        }
        switch self {
        case .reference(let name), .references(let name): models.reference(name)
        default: break
        }
    }

    /// The shape that holds values of both.
    func merged(with other: Shape) -> Shape {
        switch (self, other) {
        case (.null, _): return other
        case (_, .null): return self
        case (let a, let b) where a == b: return a
        case (.int, .double), (.double, .int): return .double
        case (.date, .string), (.string, .date): return .string
        case (.array(let a), .array(let b)): return .array(a.merged(with: b))
        default: return .json
        }
    }

    var typeName: String {
        switch self {
        case .null, .json: "JSONValue"
        case .bool: "Bool"
        case .int: "Int"
        case .double: "Double"
        case .string: "String"
        case .date: "Date"
        case .array(let element): "[\(element == .null ? "JSONValue" : element.typeName)]"
        case .model(let name), .reference(let name): name
        case .references(let name): "[\(name)]"
        }
    }

    func declaration(key: String) -> String {
        switch self {
        case .reference(let name):
            let property = Scaffold.propertyName(String(key.dropLast(3)))
            return "@References var \(property): \(name)?"
        case .references:
            let property = Scaffold.propertyName(Inflector.english.pluralize(String(key.dropLast(4))))
            return "@References(.many) var \(property): \(typeName)"
        case .model(let name):
            return "@Has(.embedsOne\(keyArgument(key))) var \(Scaffold.propertyName(key)): \(name)?"
        case .array(.model(let name)):
            return "@Has(.embedsMany\(keyArgument(key))) var \(Scaffold.propertyName(key)): [\(name)]"
        default:
            let property = Scaffold.propertyName(key)
            let field = keyArgument(key).isEmpty ? "" : "@Field(key: \"\(key)\") "
            return "\(field)var \(property): \(typeName)?"
        }
    }

    /// `, key: "…"` when the snake_cased property name would not give the key back.
    private func keyArgument(_ key: String) -> String {
        let property = Scaffold.propertyName(key).replacingOccurrences(of: "`", with: "")
        return KeyMapping.snakeCased(property) == key ? "" : ", key: \"\(key)\""
    }
}
