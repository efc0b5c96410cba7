// Names that users' code may already call, kept so that code still compiles, with a fix-it to the
// new name. Remove them at the next major version.

/// The verb of a model operation.
@available(*, deprecated, renamed: "ActionVerb")
public typealias ResourceAction = ActionVerb

/// The storage behind one model instance; only generated code uses it.
@_documentation(visibility: internal)
@available(*, deprecated, renamed: "InstanceState")
public typealias ResourceRecord<Model: ResourceModel> = InstanceState<Model>

extension ResourceQuery {
    /// The instances, in order: "record" names a server entity's data, and these are live objects.
    @available(*, deprecated, renamed: "instances")
    public var records: [Model] { instances }
}

extension ModelSchema {
    /// The `@Has` relationships: a relationship is a `@References` or a `@Has`, and the
    /// `@References` ones are in ``fields``.
    @available(*, deprecated, renamed: "hasRelationships")
    public var relationships: [ResourceRelationship<Model>] { hasRelationships }
}
