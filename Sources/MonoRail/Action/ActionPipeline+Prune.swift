import Foundation
import Logging

extension ActionPipeline {
    /// Whether a list read asks for every record of the model: unfiltered, at the model's index
    /// route, no page asked for.
    func listsEverything(_ action: ModelAction<Model>) -> Bool {
        guard case .list(let filter) = action.operation, action.path == nil else { return false }
        return filter.isEmpty && action.parameters.isEmpty
    }

    /// Prunes after a read of every record of the model whose answer says it holds the whole list,
    /// for a model that opts in; says once when an answer was one page, or said nothing of pages
    /// while pruning is on. A live query prunes for itself, once it holds the whole list.
    func pruneIfWhole(_ action: ModelAction<Model>, answer: ResourceResponse<some Sendable>, kept: [Model]) async {
        guard action.prunes, QueryBatch.fetchingQuery == nil, answer.source == .network, let extent = answer.extent
        else { return }
        // Worked out only for a notice: a whole list, the common answer, formats nothing.
        let name = Model.resourceSchema.typeName
        var request: String { answer.request.map { "\($0.method) \($0.path ?? "")" } ?? "the list" }
        switch extent {
        case .whole:
            guard setup.prunesOrphans, listsEverything(action), let fetched = answer.fetched else { return }
            await pruneOrphans(keeping: kept, fetched: fetched)
        case .partial(let total):
            let of = total.map { " of \($0)" } ?? ""
            store.noticeOnce(
                "partial \(name)",
                """
                \(request) answered with one page of a longer list (\(kept.count) records\(of)): the read \
                returns that page and prunes nothing; \(name).getAll() reads every page
                """)
        case .unstated:
            guard setup.prunesOrphans, listsEverything(action), let fetched = answer.fetched else { return }
            if await provesEnd(of: action, kept: kept) {
                await pruneOrphans(keeping: kept, fetched: fetched)
            } else {
                store.noticeOnce(
                    "unstated \(name)",
                    """
                    \(request) said nothing of pages (no next link, no total) and its next page held more \
                    records: the server pages silently, so the read prunes nothing; \(name).getAll() reads \
                    every page and prunes once it reaches the end
                    """)
            }
        }
    }

    /// Whether a list the server said nothing of pages about is all there is: its next page, asked
    /// for in the conventions' paging style, repeats it (the server ignores the page parameters: a
    /// plain Rails or FastAPI index) or is empty, and then the first page, read again, still holds
    /// the same records. A capped server answers the next records, and proves nothing.
    private func provesEnd(of action: ModelAction<Model>, kept: [Model]) async -> Bool {
        let paging = setup.conventions.paging
        var progress = PageProgress(parameters: [:])
        guard let next = progress.count(ListedPage(instances: kept), asked: .parameters([:]), paging: paging)
        else { return kept.isEmpty }
        let probe: ResourceResponse<ListedPage<Model>>
        do {
            probe = try await page(Self.step(next, of: action, in: store))
        } catch let error as APIError where error.statusCode == 404 {
            // No such page (Django REST framework's answer past the last): the list ended at the first.
            return await listHeldStill(progress, action: action)
        } catch {
            return false
        }
        _ = progress.count(probe.value, asked: next, paging: paging)
        if progress.lastPageRepeatsTheList { return true }
        guard probe.value.instances.isEmpty, probe.value.total == nil, probe.value.nextLink == nil else { return false }
        return await listHeldStill(progress, action: action)
    }

    /// Removes the records of the model that an authoritative list no longer holds: live instances
    /// (which read as deleted) and, for every record of the model, the record cache's copies.
    ///
    /// Instances fetched after the list was asked for, never described by the server, with a local
    /// id, or with writes the outbox keeps, stay: the list does not speak for them.
    ///
    /// - Parameters:
    ///   - kept: The list's instances.
    ///   - fetched: When the list was asked for.
    ///   - scope: For a filtered list, the instances it speaks for; `nil` for every record.
    func pruneOrphans(keeping kept: [Model], fetched: FetchStamp, scope: ((Model) -> Bool)? = nil) async {
        let keptIDs = Set(kept.map(ObjectIdentifier.init))
        var pruned: [(Model, ResourceID)] = []
        for instance in store.instances(of: Model.self) where !keptIDs.contains(ObjectIdentifier(instance)) {
            let id = instance._$state.state.withLock { state -> ResourceID? in
                guard let id = state.id, !id.isLocal, !state.isDeleted, !state.isDeletePending,
                    !state.pending.contains(where: { $0 != 0 }), let seen = state.fetched, seen < fetched
                else { return nil }
                return id
            }
            guard let id, scope?(instance) ?? true else { continue }
            pruned.append((instance, id))
        }
        // Gone since before the list was asked for: an answer asked for before it is older.
        store.noteGone(Model.self, ids: pruned.map(\.1), heardAt: fetched.order)
        for (instance, id) in pruned { store.noteDeletedOnServer(instance, id: id) }
        guard let storage = setup.storage else { return }
        do {
            if scope == nil {
                let ids = Set(kept.compactMap { $0.id?.description })
                let absent = try await storage.forgetAbsent(
                    model: Model.resourceName, keeping: ids, fetchedBefore: fetched.order)
                store.noteGone(Model.self, ids: absent.map { ResourceID.string($0.id) }, heardAt: fetched.order)
            } else if !pruned.isEmpty {
                try await storage.forgetDeleted(pruned.map { RecordKey(model: Model.resourceName, id: $0.1) })
            }
        } catch {
            setup.client.configuration.logger.warning(
                "the record cache could not forget the \(Model.resourceSchema.typeName) records a list no longer holds: \(error)"
            )
        }
    }
}
