import Foundation
import MonoRailClient

/// Legal Swift names for what an API calls its resources, fields and values: every name written is
/// an identifier the compiler takes, whatever the API sent.
enum SwiftNames {
    /// `train_car`, `train-car`, `Train Car`, `trainCar` → `TrainCar`; a name that is not one after
    /// that (empty, a digit first, a Swift keyword) is made one.
    static func typeName(_ text: String) -> String {
        let name = words(text).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        guard let first = name.unicodeScalars.first, isIdentifierHead(first) else { return "Model" + name }
        return reservedTypeNames.contains(name) || keywords.contains(name) ? name + "Model" : name
    }

    /// `number_of_cars` → `numberOfCars`; a keyword is escaped with backticks.
    static func propertyName(_ text: String) -> String {
        let type = words(text).map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        var name = lowerFirstWord(type)
        if name.isEmpty { name = "value" }
        if let first = name.unicodeScalars.first, !isIdentifierHead(first) { name = "_" + name }
        return name
    }

    /// The name as written in source: with backticks around a keyword.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// The words of a name: split at anything not an ASCII letter or digit (`_` too), and where a
    /// lower-case letter or digit meets an upper-case one (`trainCar` → `train`, `Car`).
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var previousIsLower = false
        // `Wéird` reads as `Weird`: accents go, letters without an ASCII form split words.
        for scalar in text.folding(options: .diacriticInsensitive, locale: nil).unicodeScalars {
            guard isIdentifierBody(scalar), scalar != "_" else {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousIsLower = false
                continue
            }
            let isUpper = scalar.properties.isUppercase
            if isUpper, previousIsLower, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current.unicodeScalars.append(scalar)
            previousIsLower = !isUpper
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `URLPath` → `urlPath`, `Name` → `name`: the leading capitals of the first word lowered.
    private static func lowerFirstWord(_ name: String) -> String {
        let scalars = Array(name.unicodeScalars)
        var upper = 0
        while upper < scalars.count, scalars[upper].properties.isUppercase { upper += 1 }
        // In `URLPath` the last capital of the run starts the next word.
        let lowered = upper > 1 && upper < scalars.count ? upper - 1 : upper
        var result = ""
        for (index, scalar) in scalars.enumerated() {
            if index < lowered {
                result += String(scalar).lowercased()
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// ASCII only: a name from any other script is spelled by its key (`@Field(key:)`), not guessed at.
    static func isIdentifierHead(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    static func isIdentifierBody(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierHead(scalar) || ("0"..."9").contains(scalar)
    }

    /// Whether `name` is an identifier as written (backticks aside).
    static func isIdentifier(_ name: String) -> Bool {
        var bare = Substring(name)
        if bare.hasPrefix("`"), bare.hasSuffix("`"), bare.count > 2 { bare = bare.dropFirst().dropLast() }
        guard let first = bare.unicodeScalars.first, isIdentifierHead(first) else { return false }
        return bare.unicodeScalars.allSatisfy(isIdentifierBody)
    }

    /// `name`, or `name2`, `name3`, … — the first not in `taken`, which it joins.
    static func unique(_ name: String, in taken: inout Set<String>) -> String {
        var candidate = name
        var number = 2
        while taken.contains(candidate) {
            candidate = name + String(number)
            number += 1
        }
        taken.insert(candidate)
        return candidate
    }

    /// Names a generated type must not take: the types its own declarations use, and what every
    /// Swift file sees.
    static let reservedTypeNames: Set<String> = [
        "Any", "AnyObject", "Array", "Bool", "Codable", "Data", "Date", "Decimal", "Dictionary", "Double", "Encodable",
        "Decodable", "Error", "Float", "Int", "Int64", "JSONValue", "Never", "Optional", "Protocol", "Result",
        "Self", "Sendable", "Set", "String", "Type", "URL", "UUID", "Void", "Hashable", "Equatable", "Identifiable",
        "MonoRail", "ResourceModel", "ResourceID", "ResourceStore", "ServerConventions", "Paging", "Foundation",
    ]

    /// Properties every `@Resource` class has already.
    static let reservedPropertyNames: Set<String> = [
        "id", "errors", "changes", "pendingChanges", "hasChanges", "hasErrors", "hasPendingChanges", "rejection",
        "isDeleted", "isPersisted", "store", "json", "description", "debugDescription", "hashValue",
        "resourceSchema", "primaryKey", "resourceName", "resourcePlural", "resourcePath", "self", "Type",
    ]

    /// Names an enum's cases must not take: members every `RawRepresentable` enum has.
    static let reservedCaseNames: Set<String> = ["rawValue", "init", "hashValue", "allCases", "self", "Type"]

    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default",
        "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch",
        "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true",
        "try", "_", "package", "consume", "borrowing", "consuming", "some", "any",
    ]
}
