/// Encodes parameters as a query string with Rails' bracket nesting.
///
/// ```swift
/// QueryEncoder.encode(["train": ["company": "DB"], "tags": ["a", "b"], "page": 2])
/// // "page=2&tags%5B%5D=a&tags%5B%5D=b&train%5Bcompany%5D=DB"
/// ```
///
/// Keys are sorted so the same parameters always give the same URL (which request de-duplication and
/// caches rely on). `null` becomes an empty value; arrays of objects become `cars[][occupancy]=…`.
public enum QueryEncoder {
    /// Encodes parameters as `name=value` pairs joined with `&`, percent-encoded.
    public static func encode(_ parameters: [String: JSONValue]) -> String {
        pairs(parameters).map { "\(APIPath.percentEncode($0))=\(APIPath.percentEncode($1))" }.joined(separator: "&")
    }

    /// The unencoded `(name, value)` pairs, in order.
    public static func pairs(_ parameters: [String: JSONValue]) -> [(String, String)] {
        var result: [(String, String)] = []
        for key in parameters.keys.sorted() {
            if let value = parameters[key] {
                append(value, name: key, into: &result)
            }
        }
        return result
    }

    private static func append(_ value: JSONValue, name: String, into result: inout [(String, String)]) {
        switch value {
        case .null: result.append((name, ""))
        case .bool(let bool): result.append((name, bool ? "true" : "false"))
        case .int(let int): result.append((name, String(int)))
        case .uint(let uint): result.append((name, String(uint)))
        case .double(let double): result.append((name, double.description))
        case .string(let string): result.append((name, string))
        case .array(let elements):
            for element in elements {
                append(element, name: "\(name)[]", into: &result)
            }
        case .object(let members):
            for key in members.keys.sorted() {
                if let member = members[key] {
                    append(member, name: "\(name)[\(key)]", into: &result)
                }
            }
        }
    }

    /// Appends encoded parameters to a path that may already have a query.
    public static func appending(_ parameters: [String: JSONValue], to path: String) -> String {
        guard !parameters.isEmpty else { return path }
        let query = encode(parameters)
        guard !query.isEmpty else { return path }
        return path + (path.contains("?") ? "&" : "?") + query
    }
}
