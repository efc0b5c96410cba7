import Foundation

/// One model operation as a value: what to do, to which record or records, with which options, in
/// which store. Every model call builds one and hands it to ``ActionPipeline``; nothing else in the
/// Resources layer sends requests.
struct ModelAction<Model: ResourceModel>: Sendable {
    enum Operation: Sendable {
        /// `get(id:)`: one record by id.
        case get(ResourceID)
        /// `current()`: the one record of a singleton resource, at a route with no id.
        case singleton
        /// `get()` / `get(where:)`: the records matching a filter.
        case list(filter: [String: JSONValue])
        /// `search(_:)`.
        case search(String)
        /// A page of a list, at the URL the page before linked to.
        case page(URL)
        /// `create()` of this instance.
        case create(Model)
        /// `save()` of this instance, which exists on the server.
        case save(Model)
        /// `fetch()`: this instance, read again.
        case fetch(Model)
        /// `delete()` of this instance.
        case delete(Model)
    }

    var operation: Operation
    /// Related models to side-load, sent as the conventions' include parameter (`?include=cars`).
    var include: [String] = []
    /// More query parameters, beside the filter.
    var parameters: [String: JSONValue] = [:]
    /// For a list: the path to read it at instead of the model's index route
    /// (``ResourceModel/get(path:parameters:policy:in:)``, a `@Has` relationship's own route).
    var path: APIPath?
    /// For a list at ``path``: the route it was made from as OpenTelemetry's `url.template`
    /// (`/trains/{id}/cars`), which names the request's span.
    var urlTemplate: String?
    /// For a `@Has` relationship's list at its own route: the related model's foreign key and the
    /// owner's id. The route names the owner, so records that lack the key belong to it.
    var owner: (key: String, id: ResourceID)?
    /// For a create: the id the app gives the record (a client-generated id), sent with it.
    var clientID: ResourceID?
    /// The store whose identity map the answer merges into.
    var store: ResourceStore
    /// A client of the app's that sends the request instead of the model's (a ``/MonoRailClient/Repository``'s):
    /// its base URL, middleware and credentials; the answer merges into ``store`` all the same.
    var client: APIClient?
    /// Called as the request body is sent.
    var uploadProgress: (@Sendable (TransferProgress) -> Void)?
    /// Where a read looks for its records; `nil` for the model's ``MonoRail/Configuration/cachePolicy``.
    var policy: CachePolicy?
    /// Whether a read may share the answer of the same request already in flight. A live query's
    /// refresh may not: that request was sent before the refresh was asked for.
    var sharesRequests = true
    /// Whether an answer holding the whole list prunes what it lacks; a page of a walk through
    /// every page does not: the walk prunes once it reached the end.
    var prunes = true

    /// Whether the read starts a list, rather than follow a link to a later page.
    var isFirstPage: Bool {
        switch operation {
        case .list, .search: true
        default: false
        }
    }

    /// The model call's name: `get` for one record by id, `list` for `get()` and `get(where:)`.
    var operationName: String {
        switch operation {
        case .get: "get"
        case .singleton: "current"
        case .list: "list"
        case .search: "search"
        case .page: "page"
        case .create: "create"
        case .save: "save"
        case .fetch: "fetch"
        case .delete: "delete"
        }
    }

    var verb: ActionVerb {
        switch operation {
        case .get, .fetch, .singleton: .show
        case .list, .page: .index
        case .search: .search
        case .create: .create
        case .save: .update
        case .delete: .destroy
        }
    }

    /// The instance a create, save, fetch or delete acts on.
    var target: Model? {
        switch operation {
        case .create(let instance), .save(let instance), .fetch(let instance), .delete(let instance): instance
        case .get, .list, .search, .singleton, .page: nil
        }
    }
}
