/// An action as the stages that outlive model types see it — a record cache keys reads by it, an
/// outbox keeps writes by it: the model's name, the verb, the record, and the request it makes.
public struct ActionDescription: Sendable, Hashable {
    /// The model's resource name: `"train"`.
    public var model: String
    /// What the action does.
    public var verb: ActionVerb
    /// The record's id, for actions on one record that exists.
    public var id: ResourceID?
    /// The request path, before the query: `"/trains/1"`.
    public var path: String
    /// The query parameters: filters, `include`, extra parameters.
    public var query: [String: JSONValue]

    /// Creates a description.
    public init(model: String, verb: ActionVerb, id: ResourceID?, path: String, query: [String: JSONValue]) {
        self.model = model
        self.verb = verb
        self.id = id
        self.path = path
        self.query = query
    }
}
