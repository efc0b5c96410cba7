import Foundation
import HTTPTypes
import HTTPTypesFoundation

/// One page of a list as the server answered it: the instances, and what it said of the rest.
struct ListedPage<Model: ResourceModel>: Sendable {
    var instances: [Model]
    /// The number of records in the whole list, when the server told it.
    var total: Int?
    /// The next page's URL, from a `Link` header field or the envelope.
    var nextLink: URL?
    /// The next page's cursor, from the envelope.
    var nextCursor: JSONValue?
    /// Whether the server links its pages (a `Link` header field, the envelope's next key): then a
    /// page that links no next one is the last.
    var isLinked = false
}

/// How the next page of a list is asked for.
enum NextPage: Sendable, Hashable {
    /// At the URL the page before linked to.
    case link(URL)
    /// With the read's parameters and the page's.
    case parameters([String: JSONValue])
}

/// Where a list is in a walk through its pages: what arrived so far, and how each page was asked
/// for, so that the walk can tell whether the list held still while it was read.
struct PageProgress: Sendable {
    /// The read's own parameters, without the page's.
    var parameters: [String: JSONValue]
    /// The records per page asked for, or `nil` when the server pages as it likes.
    var pageSize: Int? = nil
    /// Pages answered, and records they held.
    var pages = 0
    var received = 0
    /// The server's count of the whole list, the latest it told.
    var total: Int?
    /// The count each page told, in order (`nil` for a page that told none).
    var totals: [Int?] = []
    /// How each page was asked for, the first included, and the ids each held: a walk asked for
    /// again to see whether anything moved.
    var asked: [NextPage] = []
    var pageIDs: [[String]] = []

    /// The parameters of the first page.
    func firstPage(_ paging: Paging) -> [String: JSONValue] {
        var parameters = parameters
        guard let pageSize else { return parameters }
        switch paging.style {
        case .pageNumbers(let page, let size):
            parameters[page] = 1
            parameters[size] = .int(Int64(pageSize))
        case .offsets(let limit, let offset):
            parameters[limit] = .int(Int64(pageSize))
            parameters[offset] = 0
        case .cursor(_, let size, _):
            parameters[size] = .int(Int64(pageSize))
        }
        return parameters
    }

    /// Counts a page that arrived, asked for as `asked`, and says how to ask for the one after it,
    /// if any.
    ///
    /// A link the server gives is followed; a server that links its pages and linked none has no
    /// next one. Without a link, the style's parameters ask for the next page while the total says
    /// there is more — or, when the server tells no total, while the page held anything: a page
    /// shorter than the size asked for is no end (a server may cap its pages silently, as Kaminari's
    /// `max_per_page` does); only an empty page, or one that repeats what was read, shows the end.
    mutating func count<Model>(_ page: ListedPage<Model>, asked request: NextPage, paging: Paging) -> NextPage? {
        pages += 1
        received += page.instances.count
        totals.append(page.total)
        if let total = page.total { self.total = total }
        asked.append(request)
        pageIDs.append(page.instances.map { $0.id?.description ?? "" })
        // More records than asked for: the server does not page, and this was all of them.
        if let pageSize, page.instances.count > pageSize { return nil }
        if paging.followsLinks {
            if let link = page.nextLink { return .link(link) }
            // A server that links its pages, and linked none, has no next one.
            if page.isLinked { return nil }
        }
        let hasMore = total.map { received < $0 } ?? !page.instances.isEmpty
        var next = parameters
        switch paging.style {
        case .pageNumbers(let number, let size):
            guard hasMore else { return nil }
            next[number] = .int(Int64(pages + 1))
            if let pageSize { next[size] = .int(Int64(pageSize)) }
        case .offsets(let limit, let offset):
            guard hasMore else { return nil }
            if let pageSize { next[limit] = .int(Int64(pageSize)) }
            next[offset] = .int(Int64(received))
        case .cursor(let cursor, let size, let key):
            let value: JSONValue? =
                key != nil ? page.nextCursor : hasMore ? page.instances.last.flatMap { $0.id?.jsonValue } : nil
            guard let value else { return nil }
            next[cursor] = value
            if let pageSize { next[size] = .int(Int64(pageSize)) }
        }
        return .parameters(next)
    }

    /// Whether the last page repeats every record read before it and nothing else: a server that
    /// ignores the page parameters answered the whole list again. The list was whole, and — the
    /// same records in the same order — held still between the two reads.
    var lastPageRepeatsTheList: Bool {
        guard pageIDs.count >= 2, let last = pageIDs.last, !last.isEmpty else { return false }
        return last == pageIDs.dropLast().flatMap { $0 }
    }

    /// Whether the walk read pages by their place in the list — page numbers or offsets, by
    /// parameters or in the server's links — which a record created or deleted meanwhile shifts:
    /// a record can move onto a page already read and be missed. Cursor and keyset pages do not shift.
    func shifts(_ paging: Paging) -> Bool {
        guard pages > 1 else { return false }
        let names: Set<String> =
            switch paging.style {
            case .pageNumbers(let page, _): [page]
            case .offsets(_, let offset): [offset]
            case .cursor: []
            }
        return asked.dropFirst().contains { request in
            switch request {
            case .parameters(let parameters): !names.isDisjoint(with: parameters.keys)
            case .link(let url):
                // A link whose query names the style's page or offset, or, for a server whose
                // links name their own, any `page`, `page[number]`, `offset` or `page[offset]`.
                URLComponents(url: url, resolvingAgainstBaseURL: true)?.queryItems?.contains {
                    names.contains($0.name) || ["page", "offset", "page[number]", "page[offset]"].contains($0.name)
                } ?? false
            }
        }
    }

    /// Whether the pages, asked for again in order by `read`, hold the records they held: nothing
    /// moved between them while they were read. `false` when one differs, or cannot be read.
    func heldStill<Model>(reading read: (NextPage) async throws -> ListedPage<Model>) async -> Bool {
        for (request, ids) in zip(asked, pageIDs) {
            guard let again = try? await read(request), again.instances.map({ $0.id?.description ?? "" }) == ids
            else { return false }
        }
        return true
    }

    /// Whether the server's count held steady over a walk of `distinct` records: every page told
    /// the same total, and it is the number of records read.
    func totalHeldSteady(distinct: Int) -> Bool {
        guard let first = totals.first, let total = first, totals.allSatisfy({ $0 == total }) else { return false }
        return total == distinct
    }
}

extension ActionPipeline {
    /// Runs a list read and returns the page it answered with. The first page of a list from the
    /// network says how much of the list it holds (``ResourceResponse/extent``).
    func page(_ action: ModelAction<Model>) async throws -> ResourceResponse<ListedPage<Model>> {
        let paging = setup.conventions.paging
        var answer = try await run(action) { response, _, context in
            let (instances, container) = try mergeListing(response, context)
            return Self.page(of: instances, in: response, container: container, paging: paging)
        } cached: { instances in
            ListedPage(instances: instances)
        } queued: { _ in
            ListedPage(instances: [])
        }
        if answer.source == .network, action.isFirstPage {
            answer.extent = answer.value.extent(received: answer.value.instances.count)
        }
        if let owner = action.owner, let index = setup.wireKeys.firstIndex(of: owner.key) {
            let coder = FieldCoder(options: setup.coding)
            for instance in answer.value.instances {
                instance._$state.adoptServerValue(owner.id.jsonValue, at: index, of: instance, coder: coder)
            }
        }
        await pruneIfWhole(action, answer: answer, kept: answer.value.instances)
        return answer
    }

    /// Reads every page of a list, following the server's links, or the conventions' page
    /// parameters, up to ``Paging/maximumPages``: the records in the order the pages listed them.
    ///
    /// The walk ends where the list is shown to end: a last page that links no next one, a total
    /// reached, or — from a server that says nothing of pages — an empty page, or a page that repeats
    /// the whole list (a server that ignores the page parameters). A short page is no end: a server
    /// may cap its pages silently. A walk by page numbers or offsets is the whole list only if it
    /// held still while it was read — the server's total the same on every page, or the same pages
    /// read again — since a record deleted on an earlier page shifts a later one onto it, unread. A
    /// whole list of every record of the model prunes as one; any other walk prunes nothing.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/tooManyPages`` past the page limit (nothing is pruned then), or
    ///   what a page's read threw.
    func everyPage(_ action: ModelAction<Model>) async throws -> ResourceResponse<[Model]> {
        let paging = setup.conventions.paging
        var progress: PageProgress
        var first = action
        first.prunes = false
        let firstRequest: NextPage
        switch action.operation {
        case .list(let filter):
            progress = PageProgress(parameters: filter.merging(action.parameters) { filter, _ in filter })
            first.parameters = [:]
            first.operation = .list(filter: progress.parameters)
            firstRequest = .parameters(progress.parameters)
        case .page(let url):
            // A walk that starts at a link the server gave (JSON:API's `links.related`).
            progress = PageProgress(parameters: action.parameters)
            firstRequest = .link(url)
        default:
            throw APIError(.invalidRequest, "only a list read walks its pages")
        }
        let answer = try await page(first)
        guard answer.source == .network else { return answer.map(\.instances) }
        var instances = answer.value.instances
        var seen = Set(instances.map(ObjectIdentifier.init))
        var next = progress.count(answer.value, asked: firstRequest, paging: paging)
        var extent = answer.value.extent(received: progress.received)
        while let request = next, extent != .whole {
            guard progress.pages < paging.maximumPages else {
                throw APIError(
                    .tooManyPages,
                    "\(Model.resourceSchema.typeName).getAll() read \(progress.pages) pages "
                        + "(paging.maximumPages) and the list went on; nothing was pruned")
            }
            // After a page the server said nothing of, the next is asked for to see whether the list
            // goes on: a `404` (Django REST framework's answer past the last page) says it does not.
            let isProbe = extent == .unstated
            let page: ResourceResponse<ListedPage<Model>>
            do {
                page = try await self.page(Self.step(request, of: action, in: store))
            } catch let error as APIError where isProbe && error.statusCode == 404 {
                extent = .whole
                next = nil
                break
            }
            let fresh = page.value.instances.filter { seen.insert(ObjectIdentifier($0)).inserted }
            instances += fresh
            next = progress.count(page.value, asked: request, paging: paging)
            extent = page.value.extent(received: progress.received)
            if page.value.instances.isEmpty {
                // An empty page after the first: the list ended there.
                extent = .whole
            } else if fresh.isEmpty {
                // Nothing new: a server that ignores the page parameters repeats the whole list, which
                // was whole; any other repeat says nothing of where the list ends.
                extent = progress.lastPageRepeatsTheList ? .whole : .unstated
                next = nil
            }
        }
        if extent == .whole, !progress.lastPageRepeatsTheList, progress.shifts(paging),
            !progress.totalHeldSteady(distinct: instances.count),
            await !listHeldStill(progress, action: action)
        {
            extent = .unstated
            store.noticeOnce(
                "moved walk \(Model.resourceSchema.typeName)",
                """
                \(Model.resourceSchema.typeName)'s list changed while its pages were read (a record created or \
                deleted shifts the pages after it): the walk returns what it read and prunes nothing
                """)
        }
        var whole = answer.map { _ in instances }
        whole.extent = extent
        await pruneAfterWalk(first, extent: extent, keeping: instances, fetched: answer.fetched)
        return whole
    }

    /// The final check of a walk by page numbers or offsets that told no steady total: its pages
    /// asked for again, in order, hold the same records. `false` when one differs, or cannot be read.
    func listHeldStill(_ progress: PageProgress, action: ModelAction<Model>) async -> Bool {
        await progress.heldStill { request in try await page(Self.step(request, of: action, in: store)).value }
    }

    /// The read of the page after one: by the server's link, or by the parameters that ask for it.
    static func step(_ request: NextPage, of action: ModelAction<Model>, in store: ResourceStore)
        -> ModelAction<Model>
    {
        var step = ModelAction<Model>(
            operation: .list(filter: [:]), include: action.include, store: store, policy: .networkOnly)
        step.prunes = false
        step.path = action.path
        step.owner = action.owner
        switch request {
        case .link(let url): step.operation = .page(url)
        case .parameters(let parameters): step.operation = .list(filter: parameters)
        }
        return step
    }

    /// A walk that read the whole list prunes the records it no longer holds; one that could not
    /// tell where the list ends prunes nothing, and says so once.
    private func pruneAfterWalk(
        _ first: ModelAction<Model>, extent: ListExtent, keeping instances: [Model], fetched: FetchStamp?
    ) async {
        guard setup.prunesOrphans, listsEverything(first) else { return }
        if extent == .whole, let fetched {
            await pruneOrphans(keeping: instances, fetched: fetched)
        } else if extent != .whole {
            store.noticeOnce(
                "unstated walk \(Model.resourceSchema.typeName)",
                """
                \(Model.resourceSchema.typeName).getAll() could not tell where the list ends (the server \
                ignored the page parameters and said nothing of pages): nothing is pruned
                """)
        }
    }

    /// What a list response says of the pages beside it. Values that do not read as what they
    /// should be are left out: paging is the server's advice, and a list without it is one page.
    static func page(
        of instances: [Model], in response: APIResponse, container: [String: JSONValue]?, paging: Paging
    ) -> ListedPage<Model> {
        var page = ListedPage(instances: instances)
        let fields = response.response.headerFields
        if let header = paging.totalCountHeader, let name = HTTPField.Name(header), let text = fields[name],
            let total = Int(text.trimmingCharacters(in: .whitespaces)), total >= 0
        {
            page.total = total
        }
        for key in paging.totalCountKeys {
            guard case .int(let count)? = Self.member(key, of: container), count >= 0 else { continue }
            page.total = Int(exactly: count)
            break
        }
        let requestURL = response.request.url
        if let name = LinkHeader.fieldName {
            let relations = LinkHeader.relations(fields[values: name], base: requestURL)
            page.nextLink = relations["next"]
            page.isLinked = !relations.isEmpty
        }
        if page.nextLink == nil, let key = paging.nextKey, let next = Self.member(key, of: container) {
            page.isLinked = true
            if case .string(let text) = next { page.nextLink = URL(string: text, relativeTo: requestURL)?.absoluteURL }
        }
        if case .cursor(_, _, let key?) = paging.style, let value = Self.member(key, of: container), value != .null {
            page.nextCursor = value
        }
        return page
    }

    /// The member of a list's envelope at a key, or at a dotted path (`meta.pagination.count`).
    private static func member(_ key: String, of container: [String: JSONValue]?) -> JSONValue? {
        guard let container else { return nil }
        if let value = container[key] { return value }
        var value: JSONValue? = .object(container)
        for part in key.split(separator: ".") { value = value?[String(part)] }
        return value
    }
}
