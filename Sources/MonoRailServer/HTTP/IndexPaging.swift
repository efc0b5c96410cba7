/// How the reference server's index pages its lists, as the servers people run do.
public enum IndexPaging: Sendable, Hashable {
    /// `page`/`per_page` honoured, with `X-Total-Count` and RFC 8288 `Link` header fields: Rails with
    /// api-pagination, or pagy's headers. The default.
    case headers
    /// Every record, always, with nothing said of pages — no total, no links — and `page`/`per_page`
    /// ignored: a Rails `index` that renders `Train.all`, FastAPI's default route.
    case bare
    /// `page`/`per_page` honoured but `per_page` capped at `cap` (also the size when none is asked
    /// for), with nothing said of pages: Kaminari's `max_per_page` with no headers. A client that
    /// asks for more records per page gets fewer, silently.
    case silentCap(Int)
}
