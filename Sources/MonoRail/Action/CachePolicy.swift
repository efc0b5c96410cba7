/// Where a read looks for its records: the network, the store's record cache, or both, and in which
/// order.
///
/// Set one per call, or per model and store with ``MonoRail/Configuration/cachePolicy`` (default
/// ``networkOnly``):
///
/// ```swift
/// let train = try await Train.get(id: 1, policy: .cacheFirst)
/// let trains = try await Train.get(policy: .networkFirst)          // the cache when offline
/// let recent = try await Train.get(id: 1, policy: .cacheFirst(maxAge: .seconds(60)))
/// ```
///
/// Every policy that reaches the network keeps the answer in the cache. Those that consult the
/// cache first send its validators (`If-None-Match`, `If-Modified-Since`), so a server that answers
/// `304 Not Modified` costs no body: the cached records are merged and their ``ResourceModel/fetchedAt``
/// moves to the time of the request. A cached record older than the model's
/// ``MonoRail/Configuration/cacheTimeToLive`` is never answered.
public struct CachePolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable {
        case networkOnly
        case networkFirst
        case cacheFirst(maxAge: Duration?)
        case cacheOnly
        case staleWhileRevalidate
    }

    let kind: Kind

    /// Always the network, never a cached answer and no validators: what the server says now, or
    /// its error. The answer is kept in the cache. The default.
    public static let networkOnly = CachePolicy(kind: .networkOnly)

    /// The network (with validators), and the cache when the server cannot be reached or fails
    /// transiently (a timeout, a lost connection, a 408, 429 or 5xx; see
    /// ``/MonoRailClient/APIError/isTransient``). Other errors, such as a 404, are thrown.
    public static let networkFirst = CachePolicy(kind: .networkFirst)

    /// The cache when it has the records, else the network (with validators).
    public static let cacheFirst = CachePolicy(kind: .cacheFirst(maxAge: nil))

    /// The cache when its records were fetched less than `maxAge` ago, else the network (with
    /// validators).
    public static func cacheFirst(maxAge: Duration) -> CachePolicy {
        CachePolicy(kind: .cacheFirst(maxAge: maxAge))
    }

    /// The cache only; no request. Throws ``/MonoRailClient/APIError/Code/notCached`` when it lacks the records.
    public static let cacheOnly = CachePolicy(kind: .cacheOnly)

    /// The cache now, and the network in the background: when its answer arrives it merges into
    /// the same instances, and their observers hear of it. Without cached records, the network,
    /// as ``networkOnly`` but with validators. ``ResourceResponse/revalidation`` waits for the
    /// background request.
    public static let staleWhileRevalidate = CachePolicy(kind: .staleWhileRevalidate)

    /// Whether the policy reads the cache before or instead of the network.
    var readsCache: Bool { kind != .networkOnly }

    /// The policy's name without its arguments, `cacheFirst` for every maximum age: how spans and
    /// measurements name it, so that it stays one of five.
    var name: String {
        switch kind {
        case .networkOnly: "networkOnly"
        case .networkFirst: "networkFirst"
        case .cacheFirst: "cacheFirst"
        case .cacheOnly: "cacheOnly"
        case .staleWhileRevalidate: "staleWhileRevalidate"
        }
    }

    /// The policy as it is written in Swift: `"cacheFirst(maxAge: 60.0 seconds)"`.
    public var description: String {
        switch kind {
        case .networkOnly: "networkOnly"
        case .networkFirst: "networkFirst"
        case .cacheFirst(nil): "cacheFirst"
        case .cacheFirst(let maxAge?): "cacheFirst(maxAge: \(maxAge))"
        case .cacheOnly: "cacheOnly"
        case .staleWhileRevalidate: "staleWhileRevalidate"
        }
    }
}

extension Duration {
    /// The duration in seconds, as `Date` arithmetic takes it.
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
