/// Where and why a response could not be decoded into the requested type.
public struct DecodingFailure: Sendable, Hashable, CustomStringConvertible {
    /// The type being decoded, such as `"Train"`.
    public var typeName: String
    /// The wire key that was missing or held the wrong value, when there is one.
    public var key: String?
    /// The JSON path of the failing value in the whole payload, such as `"$.trains[3].number_of_cars"`.
    public var path: String
    /// What was wrong.
    public var reason: String
    /// The Swift property that could not be set, for models (`"numberOfCars"`).
    public var field: String?

    /// Creates a failure description.
    public init(typeName: String, key: String?, path: String, reason: String, field: String? = nil) {
        self.typeName = typeName
        self.key = key
        self.path = path
        self.reason = reason
        self.field = field
    }

    /// A sentence naming the type, the field, the key and the path.
    public var description: String {
        var text = "cannot decode \(typeName)"
        if let field { text += ".\(field)" }
        if let key { text += ", key \"\(key)\"" }
        return text + " at \(path): \(reason)"
    }

    init(typeName: String, error: DecodingError) {
        let codingPath: [any CodingKey]
        let reason: String
        var key: String?
        switch error {
        case .keyNotFound(let missing, let context):
            codingPath = context.codingPath + [missing]
            key = missing.stringValue
            reason = context.debugDescription
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            codingPath = context.codingPath
            reason = context.debugDescription
            key = context.codingPath.last(where: { $0.intValue == nil })?.stringValue
        @unknown default:
            codingPath = []
            reason = String(describing: error)
        }
        self.init(typeName: typeName, key: key, path: WireKey.jsonPath(codingPath), reason: reason)
    }
}
