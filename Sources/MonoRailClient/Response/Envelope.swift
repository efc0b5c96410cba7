public import HTTPTypes

/// A decoded response value together with the records that came beside it.
///
/// `{"train": {…}, "cars": […]}` decoded with root `"train"` gives the train as ``value`` and
/// `["cars": […]]` as ``sideloaded``, ready to be merged into an identity map (Objects' format).
public struct Envelope<Value> {
    /// The main value.
    public var value: Value
    /// Every other member of the enveloping object, by key.
    public var sideloaded: [String: JSONValue]
    /// The response head, when the value came from a response.
    public var response: HTTPResponse?

    /// Creates an envelope.
    public init(value: Value, sideloaded: [String: JSONValue] = [:], response: HTTPResponse? = nil) {
        self.value = value
        self.sideloaded = sideloaded
        self.response = response
    }
}

extension Envelope: Sendable where Value: Sendable {}

/// How responses are wrapped.
public struct EnvelopeStyle: Sendable, Hashable {
    /// A dot-separated path every response is wrapped in, such as `"data"` or `"data.result"`
    /// (ApiModel's `rootNamespace`); `nil` for none.
    public var rootNamespace: String?
    /// Whether a 2xx body with a top-level `errors` member is a validation failure, as in APIs that
    /// answer 200 to a rejected record.
    public var treatsErrorsMemberAsFailure: Bool

    /// Creates an envelope style.
    public init(rootNamespace: String? = nil, treatsErrorsMemberAsFailure: Bool = true) {
        self.rootNamespace = rootNamespace
        self.treatsErrorsMemberAsFailure = treatsErrorsMemberAsFailure
    }
}
