/// One key a live query sorts by: ascending or descending, with later keys breaking ties.
///
/// ```swift
/// let trains = try await Train.query(order: [.descending("max_speed"), .ascending("company")])
/// ```
///
/// The key is the record's key as the server writes it (`max_speed`), or the Swift field name
/// (`maxSpeed`). The query sends the order as the conventions' ``ServerConventions/orderParameter``
/// (`order=-max_speed,company`) so pages arrive in it, and keeps its instances in it as they change.
/// Records whose keys tie keep the order they came in; a record that joins goes after those it ties
/// with.
public struct QueryOrder: Sendable, Hashable {
    /// The key sorted by.
    public var key: String
    /// Whether larger values come first.
    public var isDescending: Bool

    /// Sorts by a key, smaller values first.
    public static func ascending(_ key: String) -> QueryOrder { QueryOrder(key: key, isDescending: false) }

    /// Sorts by a key, larger values first.
    public static func descending(_ key: String) -> QueryOrder { QueryOrder(key: key, isDescending: true) }
}
