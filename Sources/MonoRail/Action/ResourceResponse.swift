public import Foundation
public import HTTPTypes
import HTTPTypesFoundation

/// What an action gave back: its value, and what the server said beside it — status, header
/// fields, `Link` relations, ETag — and where the value came from.
///
/// The plain model calls return only the value; the `response` forms return this for callers
/// that need the rest:
///
/// ```swift
/// let page = try await Train.response(where: ["company": "MonoRail Co."])
/// page.value                      // [Train], live instances
/// page.links["next"]              // from `Link: <…?page=2>; rel="next"`
/// page.etag                       // from `ETag`
/// ```
///
/// The links, ETag and date are read from the header fields when asked for, so a call that does
/// not ask pays nothing for them.
public struct ResourceResponse<Value> {
    /// The live instance or instances (or nothing, for a delete).
    public var value: Value
    /// The response status.
    public var status: HTTPResponse.Status
    /// The response header fields.
    public var headerFields: HTTPFields
    /// Where the value came from.
    public var source: Source
    /// The request as it was sent, after middleware; `nil` when a cache answered.
    public var request: HTTPRequest?
    /// When the request that fetched the value was sent: now for a network answer, earlier for a
    /// cached one (the oldest of its records, for a list: when the list was fetched). `nil` for a
    /// write the outbox kept. By the wall clock (``MonoRail/Configuration/wallClock``).
    public var fetchedAt: Date? { fetched?.date }
    /// ``fetchedAt`` with the request's place in the order of requests.
    var fetched: FetchStamp?
    /// How old the value was when the action returned: zero from the network, the time since
    /// ``fetchedAt`` from the cache.
    public var age: Duration?
    /// For ``CachePolicy/staleWhileRevalidate`` answered from the cache: the request that refreshes
    /// the value in the background. Await its value to know the instances are up to date; it throws
    /// what the request threw (the cached value stays).
    public var revalidation: Task<Void, any Error>?
    /// For a list read from the network: whether the answer holds the whole list or one page of
    /// it, as the server told it. `nil` for anything else.
    public var extent: ListExtent?

    /// For a write the outbox kept: how it ends, which ``settled()`` waits for.
    var fate: WriteFate?

    /// Where a response's value came from.
    public typealias Source = ResponseSource

    /// Creates a response.
    public init(
        value: Value, status: HTTPResponse.Status, headerFields: HTTPFields = HTTPFields(), source: Source = .network,
        request: HTTPRequest? = nil
    ) {
        self.value = value
        self.status = status
        self.headerFields = headerFields
        self.source = source
        self.request = request
    }

    /// The relations of the `Link` header fields (RFC 8288) by `rel` — `"next"`, `"prev"`,
    /// `"first"`, `"last"` — with relative targets resolved against the request's URL.
    public var links: [String: URL] {
        LinkHeader.relations(LinkHeader.fieldName.map { headerFields[values: $0] } ?? [], base: request?.url)
    }

    /// The entity tag of the body, from the `ETag` header field.
    public var etag: String? { headerFields[.eTag] }

    /// When the server produced the answer, from its `Date` header field (an HTTP date).
    public var date: Date? { headerFields[.date].flatMap(HTTPDate.parse) }

    /// The same response with another value, such as the instances of the records it carried.
    public func map<Other>(_ transform: (Value) throws -> Other) rethrows -> ResourceResponse<Other> {
        var other = ResourceResponse<Other>(
            value: try transform(value), status: status, headerFields: headerFields, source: source,
            request: request)
        other.fetched = fetched
        other.age = age
        other.revalidation = revalidation
        other.extent = extent
        other.fate = fate
        return other
    }

    /// Waits for the write's final outcome, whatever the write policy: the one place an app learns
    /// whether the server took a create, save or delete.
    ///
    /// ```swift
    /// try await train.save().settled()   // returns once the server has it; throws if it never will
    /// ```
    ///
    /// A write sent at once (``WritePolicy/direct``) is settled when the action returns: its
    /// failure was thrown by the action itself. A write the outbox kept (``ResponseSource/outbox``)
    /// is settled when the server takes it — then this returns the value — or when the server
    /// refuses it, the outbox parks it, or it is discarded, and then this throws the same
    /// ``/MonoRailClient/APIError`` the action would have thrown had it been sent directly: its status
    /// (``/MonoRailClient/APIError/statusCode``), its field errors (``/MonoRailClient/APIError/errors``
    /// for a 422) and, for a parked write, why it was parked (``/MonoRailClient/APIError/code``:
    /// ``/MonoRailClient/APIError/Code/dependencyRejected`` for a write parked with one it depends
    /// on; the message says when the server kept failing it past the outbox's limits). A write that
    /// waits for the network waits here too: cancel the awaiting task to stop waiting, which leaves
    /// the write kept.
    ///
    /// - Returns: The response's value.
    /// - Throws: ``/MonoRailClient/APIError`` as above; ``/MonoRailClient/APIError/Code/cancelled``
    ///   when the write was discarded or the waiting task cancelled.
    @discardableResult
    public func settled() async throws -> Value {
        guard let fate else { return value }
        try await fate.result().get()
        return value
    }
}

extension ResourceResponse: Sendable where Value: Sendable {}

extension ResourceResponse {
    /// The metadata of a response as received, around `value`.
    init(_ value: Value, of response: APIResponse, source: Source, fetched: FetchStamp) {
        self.init(
            value: value, status: response.response.status, headerFields: response.response.headerFields,
            source: source, request: source == .cache ? nil : response.request)
        self.fetched = fetched
        self.age = .zero
    }
}
