/// How a server family pages its lists: the parameters a page is asked for with, and where the
/// total and the next page are told.
///
/// ```swift
/// MonoRail.configure {
///     $0.conventions = .djangoREST
///     $0.conventions.paging.style = .offsets(limit: "limit", offset: "offset")
/// }
/// let trains = try await Train.query(pageSize: 50)    // GET /trains/?limit=50&offset=0
/// try await trains.loadNextPage()                     // the `next` link of the answer
/// ```
///
/// A `Link` header field with `rel="next"` (RFC 8288), or a next-page URL in the body
/// (``nextKey``), is followed as given; without either, the next page's parameters are worked out
/// from ``style``. A next link must stay on the configured API's origin.
public struct Paging: Sendable, Hashable {
    /// The parameters of a page.
    public enum Style: Sendable, Hashable {
        /// Numbered pages from 1: `page=2&per_page=25` (Rails' will_paginate and Kaminari, the
        /// reference server; DRF's `PageNumberPagination` with `page_size`).
        case pageNumbers(page: String, size: String)
        /// An offset and a count: `offset=50&limit=25` (DRF's `LimitOffsetPagination`).
        case offsets(limit: String, offset: String)
        /// A cursor the server hands out: `after=41&per_page=25`. The cursor of the next page is read
        /// from the body at `nextCursorKey` (a key or a dotted path in the list's envelope, such as
        /// `"meta.next_cursor"`), or, when that is `nil`, is the id of the page's last record
        /// (Stripe's `starting_after`, the reference server's `after`).
        case cursor(parameter: String, size: String, nextCursorKey: String?)
    }

    /// The parameters of a page.
    public var style: Style
    /// The header field holding the number of records in the whole list, or `nil`.
    public var totalCountHeader: String?
    /// Where the list's envelope holds the number of records in the whole list, tried in order: keys
    /// (DRF's `"count"`) or dotted paths (`"meta.pagination.count"`).
    public var totalCountKeys: [String]
    /// The first of ``totalCountKeys``, or `nil` for none; setting it makes it the only one.
    public var totalCountKey: String? {
        get { totalCountKeys.first }
        set { totalCountKeys = newValue.map { [$0] } ?? [] }
    }
    /// The key, or dotted path, of the list's envelope holding the next page's URL (DRF's `"next"`,
    /// JSON:API's `"links.next"`), or `nil`.
    public var nextKey: String?
    /// Whether a next-page link the server sends is followed. Default `true`; `false` asks for each
    /// page by ``style``'s parameters, for a server whose links are wrong.
    public var followsLinks = true
    /// The most pages a read of every page (``ResourceModel/getAll(where:include:in:)``) asks for
    /// before it gives up with ``/MonoRailClient/APIError/Code/tooManyPages``. Default 1,000.
    public var maximumPages = 1_000

    /// Creates paging conventions.
    public init(
        style: Style, totalCountHeader: String? = "X-Total-Count", totalCountKey: String? = nil,
        nextKey: String? = nil
    ) {
        self.style = style
        self.totalCountHeader = totalCountHeader
        self.totalCountKeys = totalCountKey.map { [$0] } ?? []
        self.nextKey = nextKey
    }

    /// `page`/`per_page` with `Link` and `X-Total-Count` header fields (Rails, the reference server).
    public static let rails = Paging(style: .pageNumbers(page: "page", size: "per_page"))

    /// Django REST framework: `page`/`page_size` and the `{"count", "next", "previous", "results"}`
    /// envelope (an `X-Total-Count` header field is read too, for lists without it); for
    /// `LimitOffsetPagination`, set ``style`` to `.offsets(limit: "limit", offset: "offset")`.
    public static let djangoREST = Paging(
        style: .pageNumbers(page: "page", size: "page_size"), totalCountKey: "count", nextKey: "next")

    /// FastAPI's usual hand-written paging: `limit`/`offset` parameters, the total in `X-Total-Count`
    /// — or in the `"total"` of fastapi-pagination's `LimitOffsetPage` envelope,
    /// `{"items", "total", "limit", "offset"}`.
    public static let fastAPI = Paging(style: .offsets(limit: "limit", offset: "offset"), totalCountKey: "total")

    /// JSON:API: `page[number]`/`page[size]`, pages followed by the document's `links.next` (`null`
    /// on the last page), the total from `meta` as djangorestframework-jsonapi
    /// (`meta.pagination.count`), jsonapi-resources (`meta.record_count`) and others
    /// (`meta.total`, `meta.count`) write it. For `page[offset]`/`page[limit]`, set ``style`` to
    /// `.offsets(limit: "page[limit]", offset: "page[offset]")`; for the cursor profile,
    /// `.cursor(parameter: "page[after]", size: "page[size]", nextCursorKey: nil)` with the links
    /// followed as given.
    public static let jsonAPI: Paging = {
        var paging = Paging(style: .pageNumbers(page: "page[number]", size: "page[size]"), nextKey: "links.next")
        paging.totalCountKeys = [
            "meta.pagination.count", "meta.total", "meta.count", "meta.record_count", "meta.record-count",
            "meta.recordCount", "meta.total_count", "meta.totalCount", "meta.total-count",
        ]
        return paging
    }()

    /// fastapi-pagination's default `Page`: `page`/`size` parameters and the
    /// `{"items", "total", "page", "size", "pages"}` envelope.
    ///
    /// ```swift
    /// $0.conventions = .fastAPI
    /// $0.conventions.paging = .fastAPIPagination
    /// ```
    public static let fastAPIPagination = Paging(
        style: .pageNumbers(page: "page", size: "size"), totalCountKey: "total")
}

/// How a server family writes a live query's `IN` and range conditions as query parameters.
/// Equality is always `key=value`.
public enum FilterStyle: Sendable, Hashable {
    /// Rails brackets: `company[]=A&company[]=B`, `max_speed[gte]=100&max_speed[lt]=300` (the
    /// reference server).
    case brackets
    /// django-filter lookups: `company__in=A,B`, `max_speed__gte=100&max_speed__lt=300`.
    case lookups
    /// JSON:API's `filter` family, as djangorestframework-jsonapi reads it: `filter[company]=A`,
    /// `filter[company.in]=A,B`, `filter[max_speed.gte]=100`.
    case jsonAPI
}
