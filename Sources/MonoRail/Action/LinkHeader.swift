import Foundation
import HTTPTypes

/// Reads `Link` header fields (RFC 8288), for ``ResourceResponse``.
enum LinkHeader {
    /// `Link`, which swift-http-types has no constant for.
    static let fieldName = HTTPField.Name("Link")

    /// The targets of `Link` field values by relation type: `<https://api/trains?page=2>; rel="next"`.
    ///
    /// A link with several relation types (`rel="next last"`) is filed under each; the first link of
    /// a relation wins. Malformed links are skipped, never fatal: the header is advice.
    static func relations(_ values: [String], base: URL?) -> [String: URL] {
        var relations: [String: URL] = [:]
        for value in values {
            for link in split(value) {
                guard let (target, parameters) = parse(link), let url = URL(string: target, relativeTo: base) else {
                    continue
                }
                guard let rel = parameters["rel"] else { continue }
                for relation in rel.split(separator: " ") where relations[relation.lowercased()] == nil {
                    relations[relation.lowercased()] = url.absoluteURL
                }
            }
        }
        return relations
    }

    /// Splits a field value at the commas between links, not those inside `<…>` or quotes.
    private static func split(_ value: String) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var inTarget = false
        var inQuotes = false
        var index = value.startIndex
        while index < value.endIndex {
            switch value[index] {
            case "<" where !inQuotes: inTarget = true
            case ">" where !inQuotes: inTarget = false
            case "\"" where !inTarget: inQuotes.toggle()
            case "," where !inTarget && !inQuotes:
                parts.append(value[start..<index])
                start = value.index(after: index)
            default: break
            }
            index = value.index(after: index)
        }
        parts.append(value[start...])
        return parts
    }

    /// `<target>; name=value; name="quoted value"` → the target and the parameters, names lowercased.
    private static func parse(_ link: Substring) -> (String, [String: String])? {
        let trimmed = link.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("<"), let close = trimmed.firstIndex(of: ">") else { return nil }
        let target = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
        var parameters: [String: String] = [:]
        for parameter in trimmed[trimmed.index(after: close)...].split(separator: ";") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            if parameters[name] == nil { parameters[name] = value }
        }
        return (target, parameters)
    }
}
