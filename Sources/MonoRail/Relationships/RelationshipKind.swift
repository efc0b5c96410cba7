/// What a relationship field expects in the response (the seed's relationship modifiers).
public enum RelationshipKind: Sendable, Hashable {
    /// One related record: by id (`train_id`) for ``References(_:key:foreignKey:inverse:idKey:polymorphic:)``, or the
    /// record whose foreign key names this one for ``Has(_:key:foreignKey:inverse:route:)``.
    case one
    /// Many related records: by ids (`train_ids`) for `@References`, or every record whose foreign key
    /// names this one for `@Has` (loaded with `GET /cars?train_id=1`).
    case many
    /// One related record embedded in the response under the property's key.
    case embedsOne
    /// Many related records embedded in the response under the property's key.
    case embedsMany
}
