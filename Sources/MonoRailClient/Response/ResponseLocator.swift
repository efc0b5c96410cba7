/// Finds the main value of a response body: the envelope rules, in one place, for
/// ``APIClient``'s decoding and for models alike.
///
/// The rules, in order:
/// 1. **Namespace.** With a ``rootNamespace`` such as `"data.result"`, everything sits under that
///    path; a body without it is a decoding failure.
/// 2. **Root.** The first of the roots asked for that the object holds, and whose value has the
///    expected ``Shape``, is the main value; the object's other members are side-loads
///    (`{"train": {…}, "cars": […]}`). A bare array is the main value when an array is expected.
/// 3. **Errors member.** A body that holds validation errors in place of a record —
///    `{"errors": {…}}` with no `id`, or `{"train": {"errors": {…}}}` — is an
///    ``APIError/Code/validationFailed`` even at 2xx, as ApiModel reads it (unless
///    ``treatsErrorsMemberAsFailure`` is off). Without roots to go by, only a body whose sole
///    member is `errors` counts.
/// 4. **Bare.** Otherwise the body itself is the main value — unless a root is required or an
///    array was expected, which is a decoding failure naming what was looked for.
///
/// ```swift
/// let locator = ResponseLocator(rootNamespace: "data")
/// let body = try JSONParser().parse(Data(#"{"data": {"trains": [{"id": 1}]}}"#.utf8))
/// let found = try locator.locate(in: body, roots: ["trains"], shape: .array)
/// found.value        // [{"id": 1}]
/// found.path         // "$.data.trains"
/// ```
public struct ResponseLocator: Sendable, Hashable {
    /// What the main value must be to be taken from under a root.
    public enum Shape: Sendable, Hashable {
        /// Anything: a `Decodable` type says for itself what it accepts.
        case any
        /// An object: one record.
        case object
        /// An array: a list of records. Required: a body with no array where one is looked for fails.
        case array
    }

    /// A dot-separated path every body is wrapped in, such as `"data"`; `nil` or empty for none.
    public var rootNamespace: String? {
        didSet { namespaceKeys = Self.keys(of: rootNamespace) }
    }
    /// The keys of ``rootNamespace``, outermost first.
    public private(set) var namespaceKeys: [String]
    /// Where the content of a body starts, in error paths: `$`, or `$.data` under a namespace.
    public var basePath: String { namespaceKeys.reduce("$") { "\($0).\($1)" } }
    /// Whether a body holding only validation errors is a failure even at 2xx. Default `true`.
    public var treatsErrorsMemberAsFailure: Bool

    /// Creates a locator.
    public init(rootNamespace: String? = nil, treatsErrorsMemberAsFailure: Bool = true) {
        self.rootNamespace = rootNamespace?.isEmpty == true ? nil : rootNamespace
        self.namespaceKeys = Self.keys(of: rootNamespace)
        self.treatsErrorsMemberAsFailure = treatsErrorsMemberAsFailure
    }

    /// Creates the locator an envelope style describes.
    public init(_ envelope: EnvelopeStyle) {
        self.init(
            rootNamespace: envelope.rootNamespace, treatsErrorsMemberAsFailure: envelope.treatsErrorsMemberAsFailure)
    }

    private static func keys(of namespace: String?) -> [String] {
        namespace.map { $0.split(separator: ".").map(String.init) } ?? []
    }

    /// Finds the main value of `body`.
    ///
    /// - Parameters:
    ///   - body: The parsed body.
    ///   - roots: Keys the main value may sit under, tried in order.
    ///   - shape: What the main value must be.
    ///   - requiresRoot: Whether a body without any of `roots` is a failure rather than bare.
    ///   - typeName: The type being read, for error messages.
    /// - Returns: Where the main value sits and what came beside it.
    /// - Throws: ``APIError`` with ``APIError/Code/decodingFailed`` (no namespace, no required root,
    ///   no list) or ``APIError/Code/validationFailed`` (an errors member); the caller adds the
    ///   request and response.
    public func locate(
        in body: JSONValue, roots: [String], shape: Shape = .any, requiresRoot: Bool = false, typeName: String = "value"
    ) throws -> LocatedValue {
        LocatedValue(try find(in: body, roots: roots, shape: shape, requiresRoot: requiresRoot, typeName: typeName))
    }

    /// Finds the main value of a body held as a tree or a tape, or read where it lies
    /// (``InPlaceValue``), by the rules above.
    package func find<Body: EnvelopeValue>(
        in body: Body, roots: [String], shape: Shape, requiresRoot: Bool, typeName: String
    ) throws -> (value: Body, path: String, container: Body?, root: String?) {
        var container = body
        for key in namespaceKeys {
            guard container.isObject, let inner = container.member(key) else {
                throw failure(typeName, "the response has no \"\(rootNamespace ?? key)\" namespace", key: rootNamespace)
            }
            container = inner
        }
        let base = basePath
        if container.isObject {
            for root in roots {
                guard let value = container.member(root), Self.value(value, has: shape) else { continue }
                try rejectErrors(in: value, roots: [], requireNoID: true, body: body)
                return (value, "\(base).\(root)", container, root)
            }
            if container.member("errors") != nil, container.member("id") == nil,
                !roots.isEmpty || container.memberCount == 1
            {
                try rejectErrors(in: container, roots: roots, requireNoID: false, body: body)
            }
        }
        if shape == .array, container.isArray {
            return (container, base, nil, nil)
        }
        if requiresRoot || shape == .array {
            let quoted = roots.map { "\"\($0)\"" }.joined(separator: " or ")
            let message =
                shape == .array
                ? "expected a list (an array\(roots.isEmpty ? "" : ", or an object with \(quoted)"))"
                : "expected the record under \(quoted)"
            throw failure(typeName, message, key: roots.first, path: base)
        }
        return (container, base, nil, nil)
    }

    private static func value(_ value: some EnvelopeValue, has shape: Shape) -> Bool {
        switch shape {
        case .any: true
        case .object: value.isObject
        case .array: value.isArray
        }
    }

    /// Throws the validation errors `value` holds in place of a record, if that is all it is.
    private func rejectErrors<Body: EnvelopeValue>(
        in value: Body, roots: [String], requireNoID: Bool, body: Body
    ) throws {
        guard treatsErrorsMemberAsFailure, value.isObject, value.member("errors") != nil,
            !requireNoID || value.member("id") == nil,
            let errors = ValidationErrors.parse(value.tree, roots: roots, allowsBareFields: false), !errors.isEmpty
        else { return }
        throw APIError.validationFailed(errors, request: nil, response: nil, rawBody: nil, parsedBody: body.tree)
    }

    private func failure(_ typeName: String, _ message: String, key: String?, path: String = "$") -> APIError {
        APIError(
            .decodingFailed, "\(typeName): \(message)",
            decodingFailure: DecodingFailure(typeName: typeName, key: key, path: path, reason: message))
    }
}

/// The main value of a response body, where it sits, and what came beside it.
public struct LocatedValue: Sendable {
    /// The main value: a record, a list, or whatever a `Decodable` type reads.
    public var value: JSONValue
    /// Where the main value sits, for error messages: `$`, `$.trains`, `$.data.trains`.
    public var path: String
    /// The object that held the main value under ``root``; `nil` for a bare body.
    public var container: [String: JSONValue]?
    /// The key the main value sat under; `nil` for a bare body.
    public var root: String?

    init(_ found: (value: JSONValue, path: String, container: JSONValue?, root: String?)) {
        self.value = found.value
        self.path = found.path
        if case .object(let object)? = found.container { self.container = object }
        self.root = found.root
    }

    /// Every member of ``container`` but the main value: records side-loaded beside it.
    public var sideloaded: [String: JSONValue] {
        guard var members = container else { return [:] }
        if let root { members[root] = nil }
        return members
    }
}
