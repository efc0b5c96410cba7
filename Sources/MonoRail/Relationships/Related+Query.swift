extension Related {
    /// The related records of a `@Has(.many)` relationship as a live query: `GET /cars?train_id=1`,
    /// paged when asked, kept true as cars join and leave the train (see ``ResourceQuery``).
    ///
    /// ```swift
    /// let cars = try await train.$cars.query(order: [.ascending("occupancy")], pageSize: 20)
    /// cars.instances                 // the first 20 cars of the train
    /// try await cars.loadNextPage()  // the next 20
    /// ```
    ///
    /// `train.cars` itself stays what ``load()`` last loaded; the query holds its own list.
    ///
    /// - Parameters:
    ///   - filter: More conditions, beside the foreign key.
    ///   - order: Sort keys, as in ``ResourceModel/query(where:order:pageSize:include:policy:authoritative:in:)``.
    ///   - pageSize: Records per page, or `nil` for one unpaged list.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/invalidRequest`` when the property is not a `@Has`
    ///   relationship, ``/MonoRailClient/APIError/Code/notPersisted`` when the owner has no id yet, or as the request.
    public func query<Target: ResourceModel>(
        where filter: [String: QueryCondition] = [:], order: [QueryOrder] = [], pageSize: Int? = nil
    ) async throws -> ResourceQuery<Target> where Value == [Target] {
        guard let relationship = Owner.resourceSchema.hasRelationships.first(where: { $0.name == name }) else {
            throw APIError(.invalidRequest, "\(Owner.resourceSchema.typeName).\(name) is not a @Has relationship")
        }
        let (id, store) = owner._$state.state.withLock { ($0.id, $0.store ?? .default) }
        guard let id, !id.isLocal else {
            throw APIError(
                .notPersisted,
                "\(Owner.resourceSchema.typeName).\(name) cannot be queried before the record is created on the server")
        }
        let key = store.foreignKey(
            relationship.foreignKey, inverse: relationship.inverse, from: Owner.self, to: Target.self)
        guard store.setup(for: Target.self).wireKeys.contains(key) else {
            throw InstanceState<Owner>.missingKey(key, valuePath: relationship.valuePath, of: Target.self)
        }
        var conditions = filter
        conditions[key] = .equals(id.jsonValue)
        guard let route = relationship.route else {
            return try await Target.query(where: conditions, order: order, pageSize: pageSize, in: store)
        }
        let ownerSetup = store.setup(for: Owner.self)
        let path = try ownerSetup.path(for: route, id: id, instance: owner)
        let query = ResourceQuery<Target>(
            filter: conditions, order: order, pageSize: pageSize, include: [], policy: nil, isAuthoritative: false,
            store: store, route: (path, ownerSetup.urlTemplate(for: route), (key, id)))
        try await query.refresh()
        return query
    }
}
