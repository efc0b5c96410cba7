public import MonoRailClient

/// Writes `@Resource` model source from a sample JSON response: the engine of `monorail scaffold`.
///
/// ```swift
/// let source = try Scaffold.source(from: sampleJSON)
/// ```
///
/// Field types are inferred from every record in the sample (dates are recognised in the formats
/// MonoRail reads), keys ending in `_id` or `_ids` become `@References`, nested objects and arrays
/// of objects become embedded models named with the singular of their key, and every field is
/// optional, since a sample rarely shows every key of every record.
public enum Scaffold {
    /// What went wrong with a sample.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// A sentence for people.
        public var description: String
    }

    /// The Swift source of the models a sample describes.
    ///
    /// - Parameters:
    ///   - sample: The response body: `{"train": {…}}`, `{"trains": […]}`, a bare object or array.
    ///   - name: The main model's name, when the body has no root key to take it from.
    /// - Returns: Source that imports MonoRail and declares one `@Resource` class per model.
    /// - Throws: ``Failure`` when the sample holds no record.
    public static func source(from sample: JSONValue, name: String? = nil) throws -> String {
        let (rootName, records) = try mainRecords(sample, name: name)
        var models = ModelSet()
        models.add(rootName, records: records)
        return models.render()
    }

    static func mainRecords(_ sample: JSONValue, name: String?) throws -> (String, [[String: JSONValue]]) {
        switch sample {
        case .array(let array):
            return (typeName(name ?? "record"), array.compactMap(\.objectValue))
        case .object(let object):
            if object["id"] == nil, let (key, value) = object.first(where: { isRecords($0.value) }) {
                let records = value.arrayValue?.compactMap(\.objectValue) ?? value.objectValue.map { [$0] } ?? []
                return (typeName(name ?? Inflector.english.singularize(key)), records)
            }
            return (typeName(name ?? "record"), [object])
        default:
            throw Failure(description: "the sample is not a JSON object or array of records")
        }
    }

    static func isRecords(_ value: JSONValue) -> Bool {
        if case .object = value { return true }
        if case .array(let array) = value, let first = array.first, case .object = first { return true }
        return false
    }

    /// `train_car` → `TrainCar`.
    static func typeName(_ snake: String) -> String {
        let words = snake.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == " " })
        let name = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return name.first?.isLetter == true ? name : "Model" + name
    }

    /// `number_of_cars` → `numberOfCars`.
    static func propertyName(_ key: String) -> String {
        let name = typeName(key)
        let property = name.prefix(1).lowercased() + name.dropFirst()
        return keywords.contains(property) ? "`\(property)`" : property
    }

    static let keywords: Set<String> = [
        "class", "struct", "enum", "protocol", "func", "var", "let", "import", "return", "if", "else", "for",
        "while", "in", "do", "switch", "case", "default", "where", "as", "is", "try", "throw", "self", "Self",
        "super", "init", "deinit", "subscript", "static", "public", "private", "internal", "true", "false", "nil",
        "repeat", "break", "continue", "extension", "operator", "typealias", "associatedtype", "inout", "guard",
        "defer", "fallthrough", "any", "some", "Type",
    ]
}
