/// Many records of one model loaded by id in one request, `GET /cars?id[]=1&id[]=2`, instead of
/// one request each: how `@References(.many)` loads and how concurrent ``ResourceModel/get(id:include:parameters:policy:in:)``
/// calls are served when ``ServerConventions/coalescedLoads`` is set (Ember Data's
/// `coalesceFindRequests`).
///
/// ```swift
/// MonoRail.configure { $0.conventions.coalescedLoads = CoalescedLoads(parameter: "id") }
/// ```
///
/// A server that cannot filter that way still gives every record: an answer refused with an HTTP
/// status, or one that leaves records out, is completed with one `GET /cars/1` per missing id,
/// which also reports a record that does not exist as the 404 it is.
public struct CoalescedLoads: Sendable, Hashable {
    /// The query parameter listing the ids, sent with Rails brackets: `id` sends `?id[]=1&id[]=2`,
    /// which Rails' `where(id: params[:id])` reads.
    public var parameter: String
    /// The most ids one request lists; more are split into several requests. Default 100.
    public var maxIDs: Int
    /// How long the first `get(id:)` of a batch waits for others to join it: the latency a lone
    /// call pays for coalescing. Default 2 ms.
    public var window: Duration

    /// Creates the setting.
    public init(parameter: String = "id", maxIDs: Int = 100, window: Duration = .milliseconds(2)) {
        self.parameter = parameter
        self.maxIDs = max(1, maxIDs)
        self.window = max(.zero, window)
    }
}

extension ResourceModel {
    /// Fetches the records with these ids, in as few requests as the conventions allow, and returns
    /// the store's instances in the order of `ids`.
    ///
    /// ```swift
    /// let cars = try await Car.get(ids: [1, 2, 3])   // GET /cars?id[]=1&id[]=2&id[]=3, if coalescing
    /// ```
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as ``get(id:include:parameters:policy:in:)``: a missing record is
    ///   ``/MonoRailClient/APIError/Code/httpStatus`` 404, whichever way it was asked for.
    public static func get(ids: [some ResourceIDConvertible], in store: ResourceStore = .default) async throws
        -> [Self]
    {
        let ids = ids.map(\.resourceID)
        let found = try await fetch(ids, in: store)
        return ids.compactMap { found[IdentityMap.Key.Normalized($0)] }
    }

    /// The records with these ids, fetched by one coalesced request per `maxIDs` where the
    /// conventions allow, else one request each; by normalized id.
    static func fetch(_ ids: [ResourceID], in store: ResourceStore) async throws
        -> [IdentityMap.Key.Normalized: Self]
    {
        var unique: [ResourceID] = []
        var seen = Set<IdentityMap.Key.Normalized>()
        for id in ids where seen.insert(IdentityMap.Key.Normalized(id)).inserted { unique.append(id) }
        var found: [IdentityMap.Key.Normalized: Self] = [:]
        var missing = unique
        if unique.count > 1, let coalescing = store.setup(for: Self.self).conventions.coalescedLoads {
            missing = []
            var start = 0
            while start < unique.count {
                let chunk = Array(unique[start..<min(start + coalescing.maxIDs, unique.count)])
                start += chunk.count
                do {
                    let answer = try await get(
                        where: [coalescing.parameter: .array(chunk.map(\.jsonValue))], in: store)
                    for instance in answer {
                        if let id = instance.id { found[IdentityMap.Key.Normalized(id)] = instance }
                    }
                    missing += chunk.filter { found[IdentityMap.Key.Normalized($0)] == nil }
                } catch let error as APIError where error.code == .httpStatus {
                    // A server that does not take the list: ask for each record instead.
                    missing += chunk
                }
            }
        }
        try await withThrowingTaskGroup(of: Self.self) { group in
            // Not `get(id:)`, which would join a batch again.
            for id in missing { group.addTask { try await response(id: id, in: store).value } }
            for try await instance in group {
                if let id = instance.id { found[IdentityMap.Key.Normalized(id)] = instance }
            }
        }
        return found
    }
}
