public import HTTPTypes
public import MonoRailClient

extension Repository {
    /// Starts a read of the records at `path` into live instances of a model, as
    /// ``ResourceModel/get(path:parameters:include:policy:in:)`` reads them: merged into the store's
    /// identity map, so each is the instance every other read of its record returns.
    ///
    /// ```swift
    /// struct GistsRepository: Repository {
    ///     let client: APIClient
    ///
    ///     func gists(of user: String) -> RequestHandle<[Gist]> {
    ///         request(.get, "/users/\(user)/gists")     // Gist is a @Resource model
    ///     }
    /// }
    /// ```
    ///
    /// The request goes through the repository's `client` — its base URL, middleware and
    /// credentials — and its answer is read with the model's conventions into the store: its
    /// identity map and record cache.
    ///
    /// - Parameters:
    ///   - method: `GET`: a model's records are written through the model (`create()`, `save()`,
    ///     `delete()`), which keeps the identity map and the outbox right.
    ///   - path: A path under the API's root; interpolated values are percent-encoded.
    ///   - parameters: Query parameters.
    ///   - store: The identity map to merge into.
    /// - Returns: A handle that can be awaited or cancelled; it throws ``/MonoRailClient/APIError``, with
    ///   ``/MonoRailClient/APIError/Code/invalidRequest`` for any method but `GET`.
    public func request<Model: ResourceModel>(
        _ method: HTTPRequest.Method, _ path: APIPath, parameters: [String: JSONValue] = [:],
        in store: ResourceStore = .default
    ) -> RequestHandle<[Model]> {
        RequestHandle {
            guard method == .get else {
                throw APIError(
                    .invalidRequest,
                    "\(method) \(path) would write \(Model.resourceSchema.typeName) records behind the model's back; "
                        + "read them with GET, write them with create(), save() and delete()")
            }
            var action = ModelAction<Model>(operation: .list(filter: parameters), store: store)
            action.path = path
            action.client = client
            return try await ActionPipeline<Model>(store: store).list(action).value
        }
    }
}
