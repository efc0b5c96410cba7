/// How the reference server wraps bodies, to imitate the server families MonoRail talks to.
public enum ServerEnvelope: Sendable, Hashable {
    /// Rails: `{"train": {…}}`, `{"trains": […]}`, 422 `{"errors": {…}}`; side-loading with `?include=`.
    case rails
    /// Django REST framework: bare objects and arrays, trailing slashes accepted, validation errors
    /// as 400 `{"field": ["message"]}`.
    case bare
    /// Rails bodies inside a namespace: `{"data": {"train": {…}}}`.
    case namespace(String)
    /// ApiModel: Rails bodies, validation errors as 400 `{"train": {"errors": {…}}}`.
    case apiModel
}
