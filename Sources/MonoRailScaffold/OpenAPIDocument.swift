import Foundation
import MonoRailClient

/// An OpenAPI 3.0, 3.1 or 3.2 document in JSON, read with MonoRail's bounded parser, with the
/// look-ups the scaffold needs: local `$ref`s followed with a bound on their chains, so that a cycle
/// or a dangling reference is an answer, never a hang.
struct OpenAPIDocument {
    /// The largest document read: far above any real API's (GitHub's is about 12 MB).
    static let maximumSize = 64 * 1024 * 1024
    /// The most `$ref`s followed from one place before the chain counts as a cycle.
    static let maximumReferenceChain = 64

    let root: [String: JSONValue]

    init(data: Data) throws(Scaffold.Failure) {
        guard data.count <= Self.maximumSize else {
            throw Scaffold.Failure("the document is \(data.count) bytes, more than the \(Self.maximumSize) read")
        }
        let trimmed = data.drop {
            $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF
        }
        guard let first = trimmed.first else { throw Scaffold.Failure("the document is empty") }
        guard first == UInt8(ascii: "{") else {
            throw Scaffold.Failure(
                "the document is not JSON\(Self.looksLikeYAML(data) ? " (it reads as YAML)" : ""): MonoRail reads "
                    + "OpenAPI documents in JSON — FastAPI serves /openapi.json, drf-spectacular /api/schema/?format=json"
            )
        }
        let parsed: JSONValue
        do {
            parsed = try JSONParser().parse(data)
        } catch {
            throw Scaffold.Failure("the document is not valid JSON: \(error)")
        }
        guard case .object(let root) = parsed else { throw Scaffold.Failure("the document is not a JSON object") }
        if root["swagger"] != nil {
            throw Scaffold.Failure(
                "the document is Swagger 2.0: MonoRail reads OpenAPI 3 documents (convert it, for example with swagger2openapi)"
            )
        }
        guard root["openapi"]?.stringValue?.hasPrefix("3.") == true else {
            throw Scaffold.Failure("the document has no \"openapi\": \"3.x\" member: it is not an OpenAPI 3 document")
        }
        self.root = root
    }

    private static func looksLikeYAML(_ data: Data) -> Bool {
        let head = String(decoding: data.prefix(200), as: UTF8.self)
        return head.hasPrefix("openapi:") || head.hasPrefix("swagger:") || head.hasPrefix("---")
            || head.contains("\nopenapi:")
    }

    /// The document's title, or `nil`.
    var title: String? { root["info"]?["title"]?.stringValue }

    /// The paths, sorted: a parsed object keeps no order, and output must not depend on hashing.
    var paths: [(path: String, item: [String: JSONValue])] {
        guard case .object(let paths)? = root["paths"] else { return [] }
        return paths.keys.sorted().compactMap { path in
            paths[path].flatMap { resolved($0).objectValue }.map { (path, $0) }
        }
    }

    /// The component schemas, by name.
    var schemas: [String: JSONValue] {
        root["components"]?["schemas"]?.objectValue ?? [:]
    }

    /// `value` with its `$ref` followed, as far as a bounded chain goes; a dangling or cyclic
    /// reference gives an empty object, which reads as a schema that says nothing.
    func resolved(_ value: JSONValue) -> JSONValue {
        var current = value
        for _ in 0..<Self.maximumReferenceChain {
            guard let reference = current["$ref"]?.stringValue else { return current }
            guard let target = lookUp(reference) else { return .object([:]) }
            current = target
        }
        return .object([:])
    }

    /// The name of the component schema `value` refers to, when it is a `$ref` to one.
    func schemaName(of value: JSONValue) -> String? {
        guard let reference = value["$ref"]?.stringValue, reference.hasPrefix("#/components/schemas/") else {
            return nil
        }
        let name = unescape(String(reference.dropFirst("#/components/schemas/".count)))
        return schemas[name] == nil ? nil : name
    }

    /// The value a local JSON pointer (`#/components/schemas/Book`) names.
    func lookUp(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var current: JSONValue = .object(root)
        for part in reference.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false) {
            let key = unescape(String(part))
            switch current {
            case .object(let object):
                guard let next = object[key] else { return nil }
                current = next
            case .array(let array):
                guard let index = Int(key), array.indices.contains(index) else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }

    /// RFC 6901: `~1` is `/`, `~0` is `~`; and `%xx` as written in a URI fragment.
    private func unescape(_ part: String) -> String {
        let decoded = part.removingPercentEncoding ?? part
        return decoded.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
}
