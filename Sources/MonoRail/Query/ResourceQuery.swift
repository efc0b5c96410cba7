import Foundation
import MonoRailTransport
public import Observation
import Tracing

/// A list of a model's instances that stays true: the server's answer to a filter, kept current as
/// instances are created, merged, edited and deleted anywhere in the store — without a request.
///
/// ```swift
/// let trains = try await Train.query(where: ["company": "MonoRail Co."], order: [.descending("max_speed")])
/// trains.instances          // [Train], live instances, fastest first
///
/// let other = Train()
/// other.company = "MonoRail Co."
/// try await other.create()  // trains.instances now holds it too, in its place
///
/// for await records in trains {   // the list now, then each time it changes
///     print(records.map(\.company))
/// }
/// ```
///
/// It is `Observable`: a SwiftUI view reading ``instances`` redraws when membership or order changes.
///
/// **What stays true without a request.** The query evaluates its filter itself for equality, `IN`
/// and ranges (``QueryCondition``) on keys that name a field or the id, compares values as
/// ``QueryCondition`` describes, and sorts by its ``QueryOrder``s. A record joins when a change
/// makes it match — a create here, a record first seen in any response, an edit, saved or not —
/// and leaves when one makes it stop matching, or when it is deleted. An answer the server sends
/// for the query decides membership, except for instances that changed here after its request was
/// sent, which the query tests itself. A key the query cannot evaluate (one that names no field, a
/// field that embeds records) makes it refetch instead: after any record of the model is created,
/// merged or deleted, one ``refresh()`` at a time.
///
/// **Pages.** With a `pageSize`, the query holds the pages loaded so far; ``loadNextPage()`` appends
/// the next one (see ``Paging``). While pages remain, a sorted query admits a joining record only
/// if it sorts within the loaded pages; an unsorted one appends it, and the page that brings it
/// later does not repeat it. ``total`` is the server's count, kept up as records join and leave.
///
/// **Order of answers.** A query never shows an older answer than the one it shows: a ``refresh()``
/// answered after a later one is dropped, and so is a page asked for before a refresh.
public final class ResourceQuery<Model: ResourceModel>: Sendable {
    /// The store whose instances the query holds.
    public let store: ResourceStore
    /// The filter, as it was given.
    public let filter: [String: QueryCondition]
    /// The order, as it was given.
    public let order: [QueryOrder]
    /// The records per page, or `nil` for one unpaged list.
    public let pageSize: Int?
    /// Whether the server's answer is the whole truth about the records the filter matches: with
    /// ``MonoRail/Configuration/prunesOrphans``, records it matches here that the answer lacks are
    /// removed (see ``MonoRail/Configuration/prunesOrphans``). An unfiltered query is authoritative.
    public let isAuthoritative: Bool
    let plan: QueryPlan
    private let include: [String]
    /// A `@Has` relationship's own route: where the pages are read, and the owner they belong to.
    /// Its `url.template`, which names the page requests' spans.
    private let route: (path: APIPath, template: String, owner: (key: String, id: ResourceID))?
    private let policy: CachePolicy?
    let state: Locked<State>
    private let subscribers = Locked<Subscribers>(Subscribers())
    let registrar = ObservationRegistrar()

    struct State: Sendable {
        /// The instances, in the order of `membership`.
        var members: [Model] = []
        var membership: QueryMembers
        var total: Int?
        var next: NextPage?
        /// Pages of the shown answer, and the records the server sent in them.
        var progress: PageProgress
        /// What the pages loaded say of the list: only a whole one prunes.
        var extent = ListExtent.unstated
        /// The newest refresh sent, and the one whose answer is shown.
        var generation = 0
        var shownGeneration = 0
        var pageLoad: (generation: Int, task: Task<Void, any Error>)?
        var isRefetchScheduled = false
        /// When the first page of the shown answer was asked for.
        var fetched: FetchStamp?
        var refetchError: APIError?
    }

    private struct Subscribers: Sendable {
        var next = 0
        var continuations: [Int: AsyncStream<[Model]>.Continuation] = [:]
    }

    init(
        filter: [String: QueryCondition], order: [QueryOrder], pageSize: Int?, include: [String],
        policy: CachePolicy?, isAuthoritative: Bool, store: ResourceStore,
        route: (path: APIPath, template: String, owner: (key: String, id: ResourceID))? = nil
    ) {
        self.store = store
        self.route = route
        self.filter = filter
        self.order = order
        self.pageSize = pageSize.map { Swift.max(1, $0) }
        self.isAuthoritative = isAuthoritative || filter.isEmpty
        self.include = include
        self.policy = policy
        self.plan = QueryPlan(where: filter, order: order, setup: store.setup(for: Model.self))
        self.state = Locked(
            State(
                membership: QueryMembers(plan: plan),
                progress: PageProgress(parameters: plan.parameters, pageSize: self.pageSize)))
        store.broadcasters.add(self)
    }

    deinit {
        store.broadcasters.remove(ObjectIdentifier(self), of: Model.self)
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.finish() }
    }

    // MARK: - Reading

    /// The instances, in order.
    public var instances: [Model] {
        registrar.access(self, keyPath: \.instances)
        return state.withLock { $0.members }
    }

    /// The number of records in the whole list: the server's count when it sends one (an
    /// `X-Total-Count` header field, DRF's `"count"`), kept up as records join and leave; else `nil`.
    public var total: Int? {
        registrar.access(self, keyPath: \.total)
        return state.withLock { $0.total }
    }

    /// Whether ``loadNextPage()`` has a page to load.
    public var hasNextPage: Bool {
        registrar.access(self, keyPath: \.hasNextPage)
        return state.withLock { $0.next != nil }
    }

    /// Why the last refetch the query made by itself failed (see the type's discussion), or `nil`
    /// once one succeeds.
    public var refetchError: APIError? {
        registrar.access(self, keyPath: \.refetchError)
        return state.withLock { $0.refetchError }
    }

    // MARK: - Loading

    /// Asks the server again and shows its answer: the first page, for a paged query.
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as ``ResourceModel/get(where:include:policy:in:)``; the query keeps
    ///   what it showed.
    public func refresh() async throws {
        try await traced("refresh") { try await refreshing() }
    }

    private func refreshing() async throws {
        let generation = state.withLock { state in
            state.generation += 1
            return state.generation
        }
        var progress = PageProgress(parameters: plan.parameters, pageSize: pageSize)
        let paging = setup.conventions.paging
        let firstPage = NextPage.parameters(progress.firstPage(paging))
        let answer = try await fetch(firstPage, sharing: false)
        var next = progress.count(answer.value, asked: firstPage, paging: paging)
        var extent = extent(of: answer.value, progress: progress)
        if pageSize == nil, extent == .unstated, answer.source == .network, let probe = next {
            // One unpaged list from a server that says nothing of pages: its next page shows whether
            // this was all of it (repeated, or empty) or the server pages silently (more records).
            (next, extent, progress) = try await proveEnd(after: progress, asking: probe)
        }
        let values = read(answer.value.instances)
        let locals = pendingCreates()
        let coder = FieldCoder(options: setup.coding)
        let shown = state.withLock { state -> Bool in
            guard generation > state.shownGeneration else { return false }
            let previous = state.members
            state.shownGeneration = generation
            state.pageLoad = nil
            state.members = []
            state.membership.removeAll()
            admit(
                answer.value.instances, values: values, answeredAt: answer.fetched, sorting: sortsHere, into: &state)
            for (instance, values) in locals where !state.membership.contains(ObjectIdentifier(instance)) {
                insert(instance, key: plan.sortKey(values), into: &state)
            }
            // A record that joined after the request was sent — created, or moved in — is newer
            // than the answer, which cannot list it.
            for instance in previous where plan.isEvaluable && !state.membership.contains(ObjectIdentifier(instance)) {
                let values = InstanceValues.read(instance, slots: plan.slots, coder: coder)
                guard values.isNewer(than: answer.fetched), !values.isGone, plan.matches(values) else { continue }
                insert(instance, key: plan.sortKey(values), into: &state)
            }
            state.progress = progress
            state.total = answer.value.total
            state.next = next
            state.extent = extent
            state.fetched = answer.fetched
            publish(state)
            return true
        }
        if shown {
            announce()
            await pruneIfWhole(answer.source, generation: generation)
        }
    }

    /// Loads the next page and appends its records; does nothing when there is none.
    ///
    /// Calls made while a page loads wait for that page: they share one request.
    ///
    /// - Throws: ``/MonoRailClient/APIError``, as ``refresh()``; the query keeps what it showed, and the next call
    ///   asks for the same page again.
    public func loadNextPage() async throws {
        try await traced("loadNextPage") { try await loadingNextPage() }
    }

    /// Runs `body` in a span named `Train.query.refresh`: the actions it runs are its children.
    private func traced(_ call: String, _ body: () async throws -> Void) async throws {
        let setup = setup
        let attributes: SpanAttributes = ["monorail.model": "\(setup.typeName)", "monorail.action": "query.\(call)"]
        try await setup.client.telemetry.withSpan(
            "\(setup.typeName).query.\(call)", attributes: attributes
        ) { _ in
            try await body()
        }
    }

    private func loadingNextPage() async throws {
        let task = state.withLock { state -> Task<Void, any Error>? in
            if let load = state.pageLoad, load.generation == state.shownGeneration { return load.task }
            guard let next = state.next else { return nil }
            let generation = state.shownGeneration
            let progress = state.progress
            let task = Task { try await self.load(next, generation: generation, after: progress) }
            state.pageLoad = (generation, task)
            return task
        }
        try await task?.value
    }

    private func load(_ next: NextPage, generation: Int, after shown: PageProgress) async throws {
        defer {
            state.withLock { state in
                if state.pageLoad?.generation == generation { state.pageLoad = nil }
            }
        }
        // After a page the server said nothing of, the next one is asked for to see whether the
        // list goes on: a `404` says it does not.
        let isProbe = state.withLock { $0.extent == .unstated }
        let fetched = isProbe ? try await fetchProbe(next) : try await fetch(next)
        guard let answer = fetched else {
            let ended = state.withLock { state -> Bool in
                guard state.shownGeneration == generation, state.progress.pages == shown.pages else { return false }
                state.next = nil
                state.extent = .whole
                publish(state)
                return true
            }
            if ended {
                announce()
                await pruneIfWhole(.network, generation: generation)
            }
            return
        }
        let values = read(answer.value.instances)
        var progress = shown
        let following = progress.count(answer.value, asked: next, paging: setup.conventions.paging)
        let extent = extent(of: answer.value, progress: progress)
        let shown = state.withLock { state -> Bool in
            // A refresh since, or a page that got here first, makes this answer stale.
            guard state.shownGeneration == generation, state.progress.pages == shown.pages else { return false }
            let before = state.members.count
            admit(
                answer.value.instances, values: values, answeredAt: answer.fetched, sorting: sortsHere,
                into: &state)
            state.progress = progress
            if let total = answer.value.total { state.total = total }
            // A page of nothing but records already shown, with no link onward: asking again would
            // bring the same. One that repeats the whole list is a server that ignores the page
            // parameters, and the list was whole; any other says nothing of where the list ends.
            if !answer.value.instances.isEmpty, state.members.count == before, answer.value.nextLink == nil {
                state.next = nil
                state.extent = progress.lastPageRepeatsTheList ? .whole : .unstated
            } else {
                state.next = following
                state.extent = extent
            }
            publish(state)
            return true
        }
        if shown {
            announce()
            await pruneIfWhole(answer.source, generation: generation)
        }
    }

    /// Prunes what an authoritative query's answer no longer holds, once it holds the whole list.
    private func pruneIfWhole(_ source: ResponseSource, generation: Int) async {
        guard isAuthoritative, plan.isEvaluable, setup.prunesOrphans, source == .network else { return }
        let whole = state.withLock { state -> (members: [Model], fetched: FetchStamp, progress: PageProgress)? in
            guard state.shownGeneration == generation, state.next == nil, state.extent == .whole,
                let fetched = state.fetched
            else {
                return nil
            }
            return (state.members, fetched, state.progress)
        }
        guard let whole else { return }
        let progress = whole.progress
        let distinct = Set(progress.pageIDs.joined()).count
        if !progress.lastPageRepeatsTheList, progress.shifts(setup.conventions.paging),
            !progress.totalHeldSteady(distinct: distinct), await !heldStill(progress)
        {
            store.noticeOnce(
                "moved query \(Model.resourceSchema.typeName)",
                """
                a query of \(Model.resourceSchema.typeName) changed on the server while its pages were read (a \
                record created or deleted shifts the pages after it): it prunes nothing until a refresh reads \
                it whole
                """)
            return
        }
        let plan = plan
        let coder = FieldCoder(options: setup.coding)
        let matches: (Model) -> Bool = { plan.matches(InstanceValues.read($0, slots: plan.slots, coder: coder)) }
        let scope = plan.isUnfiltered ? nil : matches
        await ActionPipeline<Model>(store: store).pruneOrphans(
            keeping: whole.members, fetched: whole.fetched, scope: scope)
    }

    var setup: ModelSetup<Model> { store.setup(for: Model.self) }

    /// Whether the query sorts answers itself: it has an order the server is not told.
    private var sortsHere: Bool { plan.isSorted && setup.conventions.orderParameter == nil }

    private func fetch(_ page: NextPage, sharing: Bool = true) async throws -> ResourceResponse<ListedPage<Model>> {
        var action: ModelAction<Model>
        switch page {
        case .link(let url):
            action = ModelAction(operation: .page(url), store: store, policy: policy)
        case .parameters(var parameters):
            if let route {
                // The route names the owner: the key is the query's own condition, not the server's.
                parameters[route.owner.key] = nil
                action = ModelAction(
                    operation: .list(filter: parameters), include: include, store: store, policy: policy)
                action.path = route.path
                action.urlTemplate = route.template
            } else {
                action = ModelAction(
                    operation: .list(filter: parameters), include: include, store: store, policy: policy)
            }
        }
        action.owner = route?.owner
        action.sharesRequests = sharing
        return try await QueryBatch.$fetchingQuery.withValue(ObjectIdentifier(self)) {
            try await ActionPipeline<Model>(store: store).page(action)
        }
    }

    // MARK: - Pages

    /// What the pages loaded so far, the last of them `page`, say of the list. From a server that
    /// says nothing of pages, an empty page after the first ends it, and so does one that repeats
    /// the list; a short page does not (the server may cap its pages).
    private func extent(of page: ListedPage<Model>, progress: PageProgress) -> ListExtent {
        let told = page.extent(received: progress.received)
        guard told == .unstated, progress.pages > 1 else { return told }
        return page.instances.isEmpty || progress.lastPageRepeatsTheList ? .whole : .unstated
    }

    /// Asks for the page after a first one of which the server said nothing: the list ended there
    /// when that page repeats it or is empty — then no page is offered next — else the server pages
    /// silently, and the page is the next one to load. What was read of the probe is not shown.
    private func proveEnd(after progress: PageProgress, asking probe: NextPage) async throws
        -> (next: NextPage?, extent: ListExtent, progress: PageProgress)
    {
        guard let answer = try await fetchProbe(probe) else {
            return (nil, .whole, progress)
        }
        var probed = progress
        _ = probed.count(answer.value, asked: probe, paging: setup.conventions.paging)
        if probed.lastPageRepeatsTheList { return (nil, .whole, probed) }
        if answer.value.instances.isEmpty, answer.value.total == nil { return (nil, .whole, probed) }
        return (probe, .partial(total: nil), progress)
    }

    /// A page asked for only to see whether the list goes on; `nil` when the server answers that
    /// there is no such page (`404`, as Django REST framework answers a page past the last).
    private func fetchProbe(_ probe: NextPage) async throws -> ResourceResponse<ListedPage<Model>>? {
        do {
            return try await fetch(probe)
        } catch let error as APIError where error.statusCode == 404 {
            return nil
        }
    }

    /// The final check of pages read by number or offset: asked for again, each holds the records it
    /// held, so nothing moved between them while they were read.
    private func heldStill(_ progress: PageProgress) async -> Bool {
        await progress.heldStill { request in try await fetch(request, sharing: false).value }
    }

    // MARK: - Telling

    /// Hands the records to every iterator, under the state's lock so they arrive in order.
    func publish(_ state: State) {
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        guard !continuations.isEmpty else { return }
        let members = state.members
        store.announcer.announce {
            for continuation in continuations { continuation.yield(members) }
        }
    }

    /// Tells observers, outside the lock: an observer may read the query.
    func announce() {
        store.announcer.announce {
            self.registrar.withMutation(of: self, keyPath: \.instances) {}
            self.registrar.withMutation(of: self, keyPath: \.total) {}
            self.registrar.withMutation(of: self, keyPath: \.hasNextPage) {}
        }
    }
}

extension ResourceQuery: Observable {}

extension ResourceQuery: AsyncSequence {
    /// The records, in order.
    public typealias Element = [Model]

    /// Iterates over the query's records: the list now, then the list after each change. A slow
    /// reader skips to the newest list.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<[Model]>.Iterator

        /// The next list, or `nil` once the query is gone.
        public mutating func next() async -> [Model]? { await base.next() }
    }

    /// Starts an iteration.
    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncStream<[Model]>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Under the state's lock, so no change falls between the list now and the first update.
        state.withLock { state in
            let key = subscribers.withLock { subscribers in
                subscribers.next += 1
                subscribers.continuations[subscribers.next] = continuation
                return subscribers.next
            }
            continuation.onTermination = { [weak self] _ in
                _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
            }
            continuation.yield(state.members)
        }
        return AsyncIterator(base: stream.makeAsyncIterator())
    }
}
