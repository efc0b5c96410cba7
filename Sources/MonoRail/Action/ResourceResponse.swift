public import Foundation
public import HTTPTypes

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
/// page.headerFields[.init("X-Total-Count")!]
/// ```
public struct ResourceResponse<Value> {
    /// The live instance or instances (or nothing, for a delete).
    public var value: Value
    /// The response status.
    public var status: HTTPResponse.Status
    /// The response header fields.
    public var headerFields: HTTPFields
    /// The relations of the `Link` header (RFC 8288) by `rel`: `"next"`, `"prev"`, `"first"`,
    /// `"last"`, with relative targets resolved against the request's URL.
    public var links: [String: URL]
    /// Where the value came from.
    public var source: Source
    /// When the server produced the body (its `Date` header), when it said.
    public var date: Date?

    /// Where a response's value came from.
    public typealias Source = ResponseSource

    /// Creates a response.
    public init(
        value: Value, status: HTTPResponse.Status, headerFields: HTTPFields = HTTPFields(), links: [String: URL] = [:],
        source: Source = .network, date: Date? = nil
    ) {
        self.value = value
        self.status = status
        self.headerFields = headerFields
        self.links = links
        self.source = source
        self.date = date
    }
}

extension ResourceResponse {
    /// The entity tag of the body, from the `ETag` header.
    public var etag: String? { headerFields[.eTag] }

    /// The same response with another value, such as the instances of the records it carried.
    public func map<Other>(_ transform: (Value) throws -> Other) rethrows -> ResourceResponse<Other> {
        ResourceResponse<Other>(
            value: try transform(value), status: status, headerFields: headerFields, links: links,
            source: source, date: date)
    }
}

extension ResourceResponse: Sendable where Value: Sendable {}

extension ResourceResponse {
    /// The metadata of a response as received, around `value`.
    init(_ value: Value, of response: APIResponse, source: Source) {
        var base: URL?
        if let scheme = response.request.scheme, let authority = response.request.authority,
            let path = response.request.path
        {
            base = URL(string: "\(scheme)://\(authority)\(path)")
        }
        self.init(
            value: value, status: response.response.status, headerFields: response.response.headerFields,
            links: LinkHeader.relations(
                LinkHeader.fieldName.map { response.response.headerFields[values: $0] } ?? [], base: base),
            source: source,
            date: response.response.headerFields[.date].flatMap(LinkHeader.httpDate))
    }
}
