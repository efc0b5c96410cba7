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

extension ActionPipeline {
    /// Runs a list read and returns the page it answered with.
    func page(_ action: ModelAction<Model>) async throws -> ResourceResponse<ListedPage<Model>> {
        let paging = setup.conventions.paging
        let answer = try await run(action) { response, _, context in
            let (instances, container) = try mergeListing(response, context)
            return Self.page(of: instances, in: response, container: container, paging: paging)
        } cached: { instances in
            ListedPage(instances: instances)
        } queued: { _ in
            ListedPage(instances: [])
        }
        await pruneIfEverything(action, answer: answer, kept: answer.value.instances)
        return answer
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
        if let key = paging.totalCountKey, case .int(let count)? = container?[key], count >= 0 {
            page.total = Int(exactly: count)
        }
        let requestURL = response.request.url
        if let name = LinkHeader.fieldName {
            let relations = LinkHeader.relations(fields[values: name], base: requestURL)
            page.nextLink = relations["next"]
            page.isLinked = !relations.isEmpty
        }
        if page.nextLink == nil, let key = paging.nextKey, let next = container?[key] {
            page.isLinked = true
            if case .string(let text) = next { page.nextLink = URL(string: text, relativeTo: requestURL)?.absoluteURL }
        }
        if case .cursor(_, _, let key?) = paging.style, let container {
            var value: JSONValue? = .object(container)
            for part in key.split(separator: ".") { value = value?[String(part)] }
            if let value, value != .null { page.nextCursor = value }
        }
        return page
    }
}
