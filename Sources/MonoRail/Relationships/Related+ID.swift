import Observation

extension Related where Value: ExpressibleByNilLiteral {
    /// The id of the related record, without loading it: for a `@References`, the id the field holds
    /// — whether or not that record is live, and with no request — so a list can be grouped by
    /// author without holding every author; for a `@Has(.one)` or an embedded record, the id of the
    /// one loaded, if any.
    ///
    /// ```swift
    /// let books = try await Book.get()
    /// let byAuthor = Dictionary(grouping: books) { $0.$author.id }   // no author loaded
    /// ```
    ///
    /// Observed like the relationship itself: a view that reads it is told when the reference changes.
    public var id: ResourceID? {
        if let ids = owner._$state.referencedIDs(named: name, of: owner, property: property) { return ids.first }
        return (value as? any ResourceModel)?.id
    }
}

extension Related where Value: Sequence, Value.Element: ResourceModel {
    /// The ids of the related records, without loading them: for a `@References(.many)`, the ids the
    /// field holds, in order, whether or not those records are live; for a `@Has(.many)` or embedded
    /// records, the ids of the ones loaded.
    ///
    /// ```swift
    /// let count = train.$depots.ids.count   // no depot loaded
    /// ```
    public var ids: [ResourceID] {
        if let ids = owner._$state.referencedIDs(named: name, of: owner, property: property) { return ids }
        return value.compactMap(\.id)
    }
}

extension InstanceState {
    /// The ids the reference field declared as `name` holds, read as an access of `property` for
    /// observers; `nil` when `name` is no reference field.
    func referencedIDs<Value>(
        named name: String, of model: Model, property: any KeyPath<Model, Value> & Sendable
    ) -> [ResourceID]? {
        guard let field = Model.resourceSchema.field(named: name), field.isReference else { return nil }
        if let one = field.valuePath as? KeyPath<Model.FieldValues, ResourceID?> {
            registrar.access(model, keyPath: property)
            return state.withLock { $0.values[keyPath: one] }.map { [$0] } ?? []
        }
        if let many = field.valuePath as? KeyPath<Model.FieldValues, [ResourceID]> {
            registrar.access(model, keyPath: property)
            return state.withLock { $0.values[keyPath: many] }
        }
        return nil
    }
}
