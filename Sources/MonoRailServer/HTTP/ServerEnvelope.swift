/// How the reference server wraps bodies, to imitate the server families MonoRail talks to.
public enum ServerEnvelope: Sendable, Hashable {
    /// Rails: `{"train": {…}}`, `{"trains": […]}`, 422 `{"errors": {…}}`; side-loading with `?include=`.
    case rails
    /// Django REST framework: bare objects and arrays, trailing slashes accepted, validation errors
    /// as 400 `{"field": ["message"]}`.
    case bare
    /// Rails bodies inside a namespace: `{"data": {"train": {…}}}`.
    case namespace(String)
    /// ApiModel: Rails bodies, validation errors as 400 `{"train": {"errors": {…}}}`; singular show
    /// paths (`/post/1.json`) beside the plural ones.
    case apiModel
    /// Objects: singular paths, pushes that create or update (`POST /train/`, the id in the body),
    /// `{"object": …}` and `{"objects": […]}` with every dependency side-loaded under its plural,
    /// and has-many dependencies as id lists (`"cars": [1, 2]`) both ways. See `ObjectsRoutes`.
    case objects
    /// JSON:API 1.1 documents both ways, with the Atomic Operations extension at `POST /operations`.
    /// See `JSONAPIRoutes`.
    case jsonAPI
}
