/// A `@Has(.one)` or `@Has(.many)` relationship: the records of another model whose foreign key
/// names this one (`cars` whose `train_id` is this train's id). Nothing about it travels on the wire
/// with this record; it is read from the identity map and loaded with `GET /cars?train_id=1`.
@_documentation(visibility: internal)
public struct ResourceRelationship<Model: ResourceModel>: Sendable {
    /// The Swift property name.
    public let name: String
    /// The related model's key that holds this record's id; default: this model's singular + `_id`.
    public let foreignKey: String?
    /// The related model's property that points back, when it is not the conventional one.
    public let inverse: String?
    /// The nested route the records are loaded from, filled from the owner; `nil` for the related
    /// model's index filtered by the foreign key.
    public let route: RouteTemplate?
    /// Where the related instances' ids lie in the owner's box (`Model.FieldValues`).
    let valuePath: any AnyKeyPath & Sendable
    let related: SideLoading
    let load: @Sendable (Model) async throws -> Void
    /// Keeps the live related records alive on the owner (after they arrived side-loaded).
    let adopt: @Sendable (Model) -> Void
    /// Points the live records a JSON:API linkage lists at the owner, when they name no owner of
    /// their own: their foreign key is what the owner's linkage says of them.
    let adoptLinkage: @Sendable (Model, [ResourceID]) -> Void

    /// A `@Has` relationship. Called by generated code.
    @_documentation(visibility: internal)
    public init<Target: ResourceModel>(
        has name: String,
        _ valuePath: any WritableKeyPath<Model.FieldValues, [Target]> & Sendable,
        foreignKey: String? = nil,
        inverse: String? = nil,
        one: Bool = false,
        route: RouteTemplate? = nil
    ) {
        self.name = name
        self.foreignKey = foreignKey
        self.inverse = inverse
        self.route = route
        self.valuePath = valuePath
        self.related = .of(Target.self)
        self.adopt = { owner in
            let (id, store) = owner._$state.state.withLock { ($0.id, $0.store ?? .default) }
            guard let id else { return }
            let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
            let found = store.instances(of: Target.self, whereKey: key, is: id)
            if !found.isEmpty { owner._$state.keep(one ? Array(found.prefix(1)) : found, for: valuePath) }
        }
        self.adoptLinkage = { owner, ids in
            let (id, store) = owner._$state.state.withLock { ($0.id, $0.store ?? .default) }
            guard let id else { return }
            let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
            let targetSetup = store.setup(for: Target.self)
            guard let index = targetSetup.wireKeys.firstIndex(of: key) else { return }
            let coder = FieldCoder(options: targetSetup.coding)
            for targetID in ids {
                guard let target = store.instance(of: Target.self, id: targetID) else { continue }
                target._$state.adoptServerValue(id.jsonValue, at: index, of: target, coder: coder)
            }
        }
        self.load = { owner in
            let (id, store, link) = owner._$state.state.withLock {
                ($0.id, $0.store ?? .default, $0.relatedLinks[name])
            }
            guard let id else { return }
            let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
            if let link {
                // The server's own word on where the records are (JSON:API's `links.related`).
                var read = ModelAction<Target>(operation: .page(link), store: store)
                read.owner = (key, id)
                let found = try await ActionPipeline(store: store).everyPage(read).value
                owner._$state.keep(one ? Array(found.prefix(1)) : found, for: valuePath)
                return
            }
            guard store.setup(for: Target.self).wireKeys.contains(key) else {
                throw InstanceState<Model>.missingKey(key, valuePath: valuePath, of: Target.self)
            }
            // A server that pages by default answers with its first page: a to-many reads every page,
            // to the end the server tells or an empty (or repeated) page shows.
            var read = ModelAction<Target>(operation: .list(filter: [key: id.jsonValue]), store: store)
            if let route {
                read = ModelAction<Target>(operation: .list(filter: [:]), store: store)
                let ownerSetup = store.setup(for: Model.self)
                read.path = try ownerSetup.path(for: route, id: id, instance: owner)
                read.urlTemplate = ownerSetup.urlTemplate(for: route)
                read.owner = (key, id)
            }
            let found =
                one
                ? try await ActionPipeline(store: store).list(read).value
                : try await ActionPipeline(store: store).everyPage(read).value
            owner._$state.keep(one ? Array(found.prefix(1)) : found, for: valuePath)
        }
    }
}
