/// What an action does, named after the Rails controller action it maps to; passed to
/// ``ResourceModel/customSerialize(_:for:)`` and kept in every ``PendingWrite``.
///
/// Before the action pipeline this enum was called `ResourceAction`; that name still works, deprecated.
public enum ActionVerb: String, Sendable, Hashable {
    /// `get()` / `get(where:)`, and loading a `@Has(.many)`.
    case index
    /// `get(id:)` and `fetch()`, and loading a `@References`.
    case show
    /// `create()`.
    case create
    /// `save()` of an existing record.
    case update
    /// `delete()`.
    case destroy
    /// `search(_:)`.
    case search

    /// Whether the verb only reads: a record cache may answer it.
    public var isRead: Bool { self == .index || self == .show || self == .search }
}

extension ActionVerb {
    /// The model call that makes a write of this verb, as spans name it: `save` for an update.
    var actionName: String {
        switch self {
        case .index: "list"
        case .show: "get"
        case .create: "create"
        case .update: "save"
        case .destroy: "delete"
        case .search: "search"
        }
    }
}
