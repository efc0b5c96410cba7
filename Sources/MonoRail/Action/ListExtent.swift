/// How much of a list an answer holds, as the server told it: the whole list, one page of more,
/// or nothing said either way.
///
/// ```swift
/// let answer = try await Train.response()
/// if case .partial = answer.extent { … }   // the server paged: Train.getAll() reads every page
/// ```
///
/// Only ``whole`` lets a list remove what it lacks (``MonoRail/Configuration/prunesOrphans``): a
/// server that pages by default answers `GET /trains` with its first page.
public enum ListExtent: Sendable, Hashable {
    /// Every record the read asked for: the server links its pages and linked no next one, told a
    /// total (`X-Total-Count`, DRF's `count`) equal to what arrived, or answered with no records at
    /// all — a server that pages silently still answers its first page with records, if it has any.
    case whole
    /// One page of a longer list: the server linked a next page, or told a total above what
    /// arrived (`total`, when it told one).
    case partial(total: Int?)
    /// The server said nothing of pages — no next link, no total — so the answer proves nothing
    /// about records it lacks.
    case unstated
}

extension ListedPage {
    /// What the page says of the list, once `received` records of it arrived in all.
    func extent(received: Int) -> ListExtent {
        if nextLink != nil || nextCursor != nil { return .partial(total: total) }
        switch total {
        case let total? where total == received: return .whole
        case let total? where total > received: return .partial(total: total)
        // More than the total arrived: the count contradicts the list and proves nothing.
        case _?: return .unstated
        // Nothing at all arrived: the list is empty, whether the server pages or not.
        case nil: return isLinked || received == 0 ? .whole : .unstated
        }
    }
}
