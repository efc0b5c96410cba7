import Foundation

extension ResourceModel {
    /// Fetches the records matching a filter and returns them as a live query, which stays true as
    /// the store's instances change (see ``ResourceQuery``).
    ///
    /// ```swift
    /// let trains = try await Train.query(
    ///     where: ["company": "MonoRail Co.", "max_speed": .atLeast(100)],
    ///     order: [.descending("max_speed")], pageSize: 25)
    /// trains.instances                 // the first 25, fastest first
    /// try await trains.loadNextPage()  // and the next 25
    /// ```
    ///
    /// - Parameters:
    ///   - filter: Conditions by key: the record's key on the wire (`"train_id"`), or a field's Swift
    ///     name. Sent as the conventions' ``ServerConventions/filterStyle`` writes them.
    ///   - order: Sort keys, sent as the conventions' ``ServerConventions/orderParameter``.
    ///   - pageSize: Records per page, asked for as the conventions' ``ServerConventions/paging``
    ///     says; `nil` (the default) for one unpaged list.
    ///   - include: Related models to side-load, as in ``get(id:include:parameters:policy:in:)``.
    ///   - policy: Where each page is looked for, as in ``get(where:include:policy:in:)``.
    ///   - authoritative: Whether the answer is the whole truth about what the filter matches, so
    ///     that, with ``MonoRail/Configuration/prunesOrphans``, records it lacks are removed. An
    ///     unfiltered query always is.
    ///   - store: The store whose instances the query holds.
    /// - Returns: The query, holding the server's answer (the first page, for a paged query).
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(where:include:policy:in:)``.
    public static func query(
        where filter: [String: QueryCondition] = [:], order: [QueryOrder] = [], pageSize: Int? = nil,
        include: [String] = [], policy: CachePolicy? = nil, authoritative: Bool = false,
        in store: ResourceStore = .default
    ) async throws -> ResourceQuery<Self> {
        let query = ResourceQuery<Self>(
            filter: filter, order: order, pageSize: pageSize, include: include, policy: policy,
            isAuthoritative: authoritative, store: store)
        try await query.refresh()
        return query
    }
}
