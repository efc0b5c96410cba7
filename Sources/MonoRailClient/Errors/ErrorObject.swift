import Foundation

/// One of the error objects of a JSON:API error document, `{"errors": [{…}]}`, as the server wrote
/// it: kept on ``APIError/errorObjects`` whatever the status, beside the per-field messages that
/// those with a `source.pointer` become.
///
/// ```swift
/// catch let error as APIError {
///     error.errorObjects.first?.code      // "blank"
///     error.errorObjects.first?.pointer   // "/data/attributes/title"
///     error.errors["title"]               // ["can't be blank"]
/// }
/// ```
public struct ErrorObject: Sendable, Hashable {
    /// `id`: this occurrence of the problem.
    public var id: String?
    /// `status`: the HTTP status, as a string.
    public var status: String?
    /// `code`: the application's code for the problem.
    public var code: String?
    /// `title`: a short summary of the problem, the same for every occurrence.
    public var title: String?
    /// `detail`: what went wrong this time.
    public var detail: String?
    /// `source.pointer`: the JSON Pointer (RFC 6901) to the member of the document sent the
    /// problem is in, `/data/attributes/title`.
    public var pointer: String?
    /// `source.parameter`: the query parameter the problem is in.
    public var parameter: String?
    /// `source.header`: the request header field the problem is in.
    public var header: String?
    /// `meta`, as sent.
    public var meta: JSONValue?

    /// Creates an error object.
    public init(
        id: String? = nil, status: String? = nil, code: String? = nil, title: String? = nil, detail: String? = nil,
        pointer: String? = nil, parameter: String? = nil, header: String? = nil, meta: JSONValue? = nil
    ) {
        self.id = id
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.pointer = pointer
        self.parameter = parameter
        self.header = header
        self.meta = meta
    }

    /// Reads an error object; `nil` for anything that is not an object. Members of other types than
    /// the specification's are left out (a numeric `status` is read as its digits).
    public init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        id = members["id"]?.stringValue
        switch members["status"] {
        case .string(let text)?: status = text
        case .int(let number)?: status = String(number)
        default: status = nil
        }
        code = members["code"]?.stringValue
        title = members["title"]?.stringValue
        detail = members["detail"]?.stringValue
        let source = members["source"]?.objectValue
        pointer = source?["pointer"]?.stringValue
        parameter = source?["parameter"]?.stringValue
        header = source?["header"]?.stringValue
        meta = members["meta"]
    }

    /// The field the error is about (``ValidationErrors/baseField`` when ``field`` is `nil`) and
    /// what it says (``detail``, else ``title``, else ``code``), as validation errors file it;
    /// `nil` when it says nothing.
    package var fieldMessage: (field: String, message: String)? {
        guard let message = detail ?? title ?? code else { return nil }
        return (field ?? ValidationErrors.baseField, message)
    }

    /// The field the error is about, from ``pointer``: `title` for `/data/attributes/title`,
    /// `address.city` for `/data/attributes/address/city`, `author` for
    /// `/data/relationships/author`, ``ValidationErrors/baseField`` for `/data` and
    /// `/data/attributes`; `nil` for no pointer, or one outside the primary data.
    public var field: String? {
        guard let pointer, pointer.hasPrefix("/data") else { return nil }
        // RFC 6901: `~1` is `/` and `~0` is `~`, in that order.
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
        guard tokens.first == "data" else { return nil }
        var rest = Array(tokens.dropFirst())
        // An atomic operation's or a list's index: `/data/0/attributes/title`.
        if let first = rest.first, Int(first) != nil { rest.removeFirst() }
        guard let section = rest.first else { return ValidationErrors.baseField }
        switch section {
        case "attributes", "relationships":
            let path = rest.dropFirst()
            return path.isEmpty ? ValidationErrors.baseField : path.joined(separator: ".")
        case "id", "type":
            return section
        default:
            return nil
        }
    }
}

extension APIError {
    /// The JSON:API error objects of the response body, `{"errors": [{…}]}`; empty for any other body.
    public var errorObjects: [ErrorObject] {
        guard case .array(let items)? = parsedBody?["errors"] else { return [] }
        return items.compactMap(ErrorObject.init(json:))
    }
}
