import Foundation

/// Field-level validation messages from a server, such as a Rails 422 response.
///
/// Read them per field or as sentences:
///
/// ```swift
/// catch let error as APIError where error.code == .validationFailed {
///     error.errors["company"]     // ["can't be blank"]
///     error.errors.fullMessages   // ["Company can't be blank"]
/// }
/// ```
///
/// Recognised shapes: Rails `{"errors": {"company": ["can't be blank"]}}`, Django REST framework's bare
/// `{"company": ["This field is required."]}`, ApiModel's `{"train": {"errors": {…}}}`, an array of
/// messages `{"errors": ["…"]}`, which are filed under ``baseField``, and FastAPI's (Pydantic's)
/// `{"detail": [{"loc": ["body", "title"], "msg": "Field required"}]}`, keyed by `loc` without its
/// `body`/`query`/`path`/`header`/`cookie` part, a nested `loc` as a dotted path (`author.name`,
/// `tags.0`).
public struct ValidationErrors: Sendable, Hashable, Sequence {
    /// The field name for messages about the record as a whole (Rails' `base`).
    public static let baseField = "base"

    /// Fields in the order the server sent them, each with its messages.
    public private(set) var fields: [(field: String, messages: [String])]

    /// Creates validation errors from field–message pairs.
    public init(_ fields: [(field: String, messages: [String])] = []) {
        self.fields = fields
    }

    /// Creates validation errors from messages each about one field, grouped by field in the order
    /// each field first appears.
    package init(grouping messages: some Sequence<(field: String, message: String)>) {
        var fields: [(field: String, messages: [String])] = []
        // A field's place in `fields`: a long list of messages stays one pass.
        var positions: [String: Int] = [:]
        for (field, message) in messages {
            if let index = positions[field] {
                fields[index].messages.append(message)
            } else {
                positions[field] = fields.count
                fields.append((field, [message]))
            }
        }
        self.fields = fields
    }

    /// Creates validation errors from a dictionary, with fields sorted by name.
    public init(_ dictionary: [String: [String]]) {
        self.fields = dictionary.keys.sorted().map { ($0, dictionary[$0] ?? []) }
    }

    /// The messages for a field; empty when it has none.
    ///
    /// The field can be given as sent (`"number_of_cars"`) or as the Swift property (`"numberOfCars"`).
    public subscript(field: String) -> [String] {
        if let match = fields.first(where: { $0.field == field }) { return match.messages }
        let snake = KeyMapping.snakeCased(field)
        return fields.first(where: { $0.field == snake })?.messages ?? []
    }

    /// Whether there are no messages at all.
    public var isEmpty: Bool { fields.allSatisfy { $0.messages.isEmpty } }

    /// Every message as a sentence, Rails style: `"Company can't be blank"`.
    ///
    /// Messages on ``baseField`` (and Django's `non_field_errors`) are used as they are; a message that
    /// already reads as a sentence (it starts with a capital letter) is joined with a colon.
    public var fullMessages: [String] {
        fields.flatMap { field, messages in
            messages.map { Self.fullMessage(field: field, message: $0) }
        }
    }

    /// Iterates field–message pairs.
    public func makeIterator() -> IndexingIterator<[(field: String, messages: [String])]> {
        fields.makeIterator()
    }

    static func fullMessage(field: String, message: String) -> String {
        if field == baseField || field == "non_field_errors" || field.isEmpty { return message }
        let name = humanize(field)
        if let first = message.unicodeScalars.first, first.properties.isUppercase {
            return "\(name): \(message)"
        }
        return "\(name) \(message)"
    }

    /// Rails' `humanize`: `"number_of_cars"` → `"Number of cars"`, `"train_id"` → `"Train"`,
    /// `"cars.occupancy"` → `"Cars occupancy"`.
    static func humanize(_ field: String) -> String {
        var words = field
        if words.hasSuffix("_id") { words.removeLast(3) }
        words = KeyMapping.snakeCased(words)
            .replacingOccurrences(of: ".", with: " ")
            .replacingOccurrences(of: "_", with: " ")
            .trimmingCharacters(in: .whitespaces)
        guard let first = words.first else { return field }
        return first.uppercased() + words.dropFirst()
    }

    /// Whether both hold the same fields and messages in the same order.
    public static func == (lhs: ValidationErrors, rhs: ValidationErrors) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.field == $1.field && $0.messages == $1.messages }
    }

    /// Hashes the fields and messages in order.
    public func hash(into hasher: inout Hasher) {
        for (field, messages) in fields {
            hasher.combine(field)
            hasher.combine(messages)
        }
    }
}

// MARK: - Parsing

extension ValidationErrors {
    /// Reads validation errors from a response body, or returns `nil` when the body is in none of the
    /// recognised shapes.
    ///
    /// - Parameters:
    ///   - body: The parsed body.
    ///   - roots: Root keys the record may be wrapped in (ApiModel's `{"train": {"errors": …}}`).
    ///   - allowsBareFields: Accept Django REST framework's bare `{field: [message]}` shape.
    public static func parse(_ body: JSONValue, roots: [String] = [], allowsBareFields: Bool = true)
        -> ValidationErrors?
    {
        guard case .object(let object) = body else { return nil }
        if case .array(let details)? = object["detail"], let parsed = fromDetails(details) {
            return parsed
        }
        if let errors = object["errors"], let parsed = fromErrorsValue(errors) {
            return parsed
        }
        for root in roots {
            if let wrapped = object[root]?["errors"], let parsed = fromErrorsValue(wrapped) {
                return parsed
            }
        }
        if object.count == 1, let wrapped = object.values.first?["errors"], let parsed = fromErrorsValue(wrapped) {
            return parsed
        }
        if allowsBareFields, !object.isEmpty, object["error"] == nil, object["detail"] == nil {
            return fromFieldMap(object)
        }
        return nil
    }

    /// The parts of a Pydantic `loc` that say where the value came from rather than which field it is.
    private static let locationParts: Set<String> = ["body", "query", "path", "header", "cookie"]

    /// FastAPI's `[{"loc": [...], "msg": "...", "type": "..."}]`; `nil` unless every item has both.
    private static func fromDetails(_ details: [JSONValue]) -> ValidationErrors? {
        var messages: [(field: String, message: String)] = []
        for detail in details {
            guard case .array(let loc)? = detail["loc"], let message = detail["msg"]?.stringValue else { return nil }
            var parts = loc.compactMap { part -> String? in
                if let name = part.stringValue { return name }
                return part.intValue.map { String($0) }
            }
            guard parts.count == loc.count else { return nil }
            if let first = parts.first, locationParts.contains(first) { parts.removeFirst() }
            messages.append((parts.isEmpty ? baseField : parts.joined(separator: "."), message))
        }
        return messages.isEmpty ? nil : ValidationErrors(grouping: messages)
    }

    private static func fromErrorsValue(_ value: JSONValue) -> ValidationErrors? {
        switch value {
        case .object(let map):
            return fromFieldMap(map)
        case .array(let items) where items.contains(where: { $0.objectValue != nil }):
            return fromErrorObjects(items)
        case .array(let messages):
            let strings = messages.compactMap(\.stringValue)
            guard strings.count == messages.count, !strings.isEmpty else { return nil }
            return ValidationErrors([(baseField, strings)])
        case .string(let message):
            return ValidationErrors([(baseField, [message])])
        default:
            return nil
        }
    }

    /// JSON:API's error objects: those whose `source.pointer` names a field of the document sent,
    /// by `detail` (else `title`): `/data/attributes/title` → `title`, `/data/attributes/address/city`
    /// → `address.city`, `/data/relationships/author` → `author`, `/data` → ``baseField``. `nil`
    /// unless at least one points at the document: errors that point nowhere are not validation
    /// errors, and are then filed under ``baseField`` beside the ones that do.
    private static func fromErrorObjects(_ items: [JSONValue]) -> ValidationErrors? {
        let objects = items.compactMap(ErrorObject.init(json:))
        guard objects.count == items.count, objects.contains(where: { $0.field != nil }) else { return nil }
        let errors = ValidationErrors(grouping: objects.compactMap(\.fieldMessage))
        return errors.isEmpty ? nil : errors
    }

    /// Whether a body is a JSON:API error document with at least one error pointing at a field of
    /// the document sent: validation errors whatever the status.
    package static func pointsAtFields(_ body: JSONValue) -> Bool {
        guard case .array(let items)? = body["errors"] else { return false }
        return items.contains { ErrorObject(json: $0)?.field != nil }
    }

    /// `{field: [message]}` or `{field: message}`, with nested objects flattened to `parent.child`.
    private static func fromFieldMap(_ map: [String: JSONValue], prefix: String = "") -> ValidationErrors? {
        var fields: [(field: String, messages: [String])] = []
        for key in map.keys.sorted() {
            guard let value = map[key] else { continue }
            let name = prefix.isEmpty ? key : "\(prefix).\(key)"
            switch value {
            case .string(let message):
                fields.append((name, [message]))
            case .array(let items):
                let strings = items.compactMap(\.stringValue)
                guard strings.count == items.count else { return nil }
                fields.append((name, strings))
            case .object(let nested):
                guard let inner = fromFieldMap(nested, prefix: name) else { return nil }
                fields.append(contentsOf: inner.fields)
            default:
                return nil
            }
        }
        return fields.isEmpty ? nil : ValidationErrors(fields)
    }
}
