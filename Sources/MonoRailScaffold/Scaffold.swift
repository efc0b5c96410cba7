public import Foundation
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
    /// What went wrong with a sample or a document.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// A sentence for people.
        public var description: String

        /// Creates a failure.
        public init(_ description: String) { self.description = description }
    }

    /// The access level of what is written: `internal` for models in the app itself, `public` or
    /// `package` for models in a module of their own.
    public enum Access: String, Sendable, CaseIterable {
        case `internal`, `package`, `public`
    }

    /// One Swift file written.
    public struct File: Sendable, Hashable {
        /// Its name, such as `Book.swift`.
        public var name: String
        /// Its source.
        public var contents: String
    }

    /// The files written, and what the scaffold could not say in Swift.
    public struct Output: Sendable {
        /// One file per model, then the configuration.
        public var files: [File]
        /// Sentences about what was left out or guessed, for the person running the scaffold.
        public var warnings: [String]
    }

    /// The largest OpenAPI document read, in bytes.
    public static var maximumDocumentSize: Int { OpenAPIDocument.maximumSize }

    /// The models and configuration an OpenAPI 3 document (JSON) describes: one `@Resource` per
    /// resource schema, a file each, and one file with the API's `ServerConventions` and a
    /// `MonoRail.Configuration.use…(apiRootURL:)` that applies them.
    ///
    /// ```swift
    /// let output = try Scaffold.models(fromOpenAPI: try Data(contentsOf: documentURL))
    /// for file in output.files { try file.contents.write(to: folder.appending(path: file.name), …) }
    /// ```
    ///
    /// The same document always gives the same files. Every name is a legal Swift identifier, whatever
    /// the document calls things.
    ///
    /// - Throws: ``Failure`` when the document is not an OpenAPI 3 document in JSON, or describes no
    ///   resource.
    public static func models(fromOpenAPI data: Data, access: Access = .internal) throws(Failure) -> Output {
        try OpenAPIScaffold(document: try OpenAPIDocument(data: data), access: access).files()
    }

    /// Refuses a file whose names are not all legal: what is written must compile. Comments and
    /// string literals, which may say anything, are passed over.
    static func check(_ file: File) throws(Failure) {
        for line in file.contents.split(separator: "\n") {
            let code = withoutStrings(line)
            guard !code.trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
            let words = code.split(separator: " ")
            for (index, word) in words.enumerated() where ["class", "struct", "enum", "var", "case"].contains(word) {
                guard index + 1 < words.count else { continue }
                let name = words[index + 1].prefix { $0 != ":" && $0 != "(" && $0 != "=" && $0 != " " }
                guard !name.isEmpty else { continue }
                guard SwiftNames.isIdentifier(String(name)) else {
                    throw Failure(
                        "\(file.name) would declare \"\(name)\", which is not a Swift name: nothing was written")
                }
            }
        }
    }

    /// A line with the contents of its string literals left out: `"a var b"` → `""`.
    static func withoutStrings(_ line: Substring) -> String {
        var result = ""
        var inString = false
        var escaped = false
        for character in line {
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                    result.append(character)
                }
                continue
            }
            if character == "\"" { inString = true }
            result.append(character)
        }
        return result
    }

    /// The Swift source of the models a sample describes.
    ///
    /// - Parameters:
    ///   - sample: The response body: `{"train": {…}}`, `{"trains": […]}`, a bare object or array.
    ///   - name: The main model's name, whatever the body says.
    ///   - defaultName: The main model's name when the body has no root key to take it from: the one
    ///     ``modelName(fromPath:)`` reads from the sample's URL. Without either, `Record`.
    /// - Returns: Source that imports MonoRail and declares one `@Resource` class per model.
    /// - Throws: ``Failure`` when the sample holds no record, or a name in it cannot be said in Swift.
    public static func source(from sample: JSONValue, name: String? = nil, defaultName: String? = nil) throws(Failure)
        -> String
    {
        let (rootName, records) = try mainRecords(sample, name: name, defaultName: defaultName)
        guard !records.isEmpty else { throw Failure("the sample holds no record: no JSON object to read fields from") }
        var models = ModelSet()
        models.add(rootName, records: records)
        let source = models.render()
        try check(File(name: "\(rootName).swift", contents: source))
        return source
    }

    /// The model a sample's URL path names: `/books/1` → `Book`, `/api/v1/train_cars?page=2` →
    /// `TrainCar`; ids, versions and extensions are passed over. `nil` when nothing in it is a name.
    public static func modelName(fromPath path: String) -> String? {
        let segments = path.split(separator: "?").first.map { $0.split(separator: "/") } ?? []
        for segment in segments.reversed() {
            var word = String(segment)
            if let dot = word.firstIndex(of: ".") { word = String(word[..<dot]) }
            let isVersion = word.count <= 3 && word.first == "v" && word.dropFirst().allSatisfy(\.isNumber)
            let isID =
                word.allSatisfy { $0.isNumber || $0 == "-" }
                || (word.count >= 32 && word.allSatisfy(\.isHexDigit) || UUID(uuidString: word) != nil)
            guard !word.isEmpty, !isVersion, !isID, !SwiftNames.words(word).isEmpty, word != "api" else { continue }
            return SwiftNames.typeName(Inflector.english.singularize(word))
        }
        return nil
    }

    static func mainRecords(_ sample: JSONValue, name: String?, defaultName: String?) throws(Failure) -> (
        String, [[String: JSONValue]]
    ) {
        switch sample {
        case .array(let array):
            return (typeName(name ?? defaultName ?? "record"), array.compactMap(\.objectValue))
        case .object(let object):
            if object["id"] == nil,
                let key = object.keys.sorted().first(where: { object[$0].map(isRecords) ?? false }),
                let value = object[key]
            {
                let records = value.arrayValue?.compactMap(\.objectValue) ?? value.objectValue.map { [$0] } ?? []
                return (typeName(name ?? Inflector.english.singularize(key)), records)
            }
            return (typeName(name ?? defaultName ?? "record"), [object])
        default:
            throw Failure("the sample is not a JSON object or array of records")
        }
    }

    static func isRecords(_ value: JSONValue) -> Bool {
        if case .object = value { return true }
        if case .array(let array) = value, let first = array.first, case .object = first { return true }
        return false
    }

    /// `train_car` → `TrainCar`, always a legal type name.
    static func typeName(_ snake: String) -> String {
        SwiftNames.typeName(snake)
    }

    /// `number_of_cars` → `numberOfCars`, a keyword in backticks; a name every model has already
    /// (`errors`, `changes`) gets `Value` after it.
    static func propertyName(_ key: String) -> String {
        var name = SwiftNames.propertyName(key)
        if SwiftNames.reservedPropertyNames.contains(name) { name += "Value" }
        return SwiftNames.escaped(name)
    }
}
