import Foundation
import MonoRailTransport

/// One change to an instance, as live queries are told of it: plain values, so that holding a
/// merge's changes costs no run-time look-up of the model's types.
struct QueryChange: Sendable {
    /// An instance of the model whose queries are told.
    let instance: any AnyObject & Sendable
    var kind: ChangeFacts.Kind
    /// The changed fields as ``QueryPlan/mask(_:)`` writes them.
    var mask: UInt64
}

/// What a live query needs to know of one change, in plain values that copy without a reference
/// count: a large merge tests each change against each query, and code generic over the model would
/// look the model's layout up at run time for every test. The instance's values are beside it, in
/// ``ChangeTable/values``.
struct ChangeFacts: Sendable {
    enum Kind: Sendable {
        /// The store has the record now: created here, or first seen.
        case created
        case deleted
        /// A server answer changed fields.
        case merged
        /// The app changed fields: an edit or a revert.
        case edited

        init<Model>(_ kind: ResourceUpdate<Model>.Kind) {
            switch kind {
            case .created: self = .created
            case .deleted: self = .deleted
            case .merged: self = .merged
            case .edited, .reverted, .related: self = .edited
            }
        }
    }

    var isWrite: Bool { kind == .merged || kind == .edited }

    let instance: ObjectIdentifier
    let kind: Kind
    /// The changed fields as ``QueryPlan/mask(_:)`` writes them.
    let mask: UInt64
    /// Deleted, or its delete kept in the outbox: no query shows it.
    let isGone: Bool
}

/// The live queries of one model, as the store tells them of a change: without the model's type,
/// which an instance's announcement would otherwise look up at run time, once per instance.
protocol QueryRegistry: AnyObject, Sendable {
    /// Tells the queries of a change: now, or when the merge that made it has applied.
    func note(_ change: QueryChange, in store: ResourceStore)

    /// Asks the server again for every query's records (a live-updates reset); returns the first
    /// failure.
    func refreshAll() async -> APIError?
}

/// The live queries of one model in a store, told of every change to its instances.
///
/// Queries are held weakly: one the app drops stops being told. Changes made by one merge are told
/// together, once the merge has applied (``QueryBatch``), so a query moves once per response, not
/// once per record.
final class ModelQueries<Model: ResourceModel>: QueryRegistry {
    private struct Entry {
        weak var query: ResourceQuery<Model>?
        let plan: QueryPlan
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// What any query reads.
        var slots: Set<QuerySlot> = []
        var mask: UInt64 = 0
        var hasUnevaluable = false
    }

    private let state = Locked(State())
    /// Held while changes are read and applied, so that of two changes to one instance the one
    /// applied last read the newer values, whatever order their announcements ran in. Counts the
    /// batches applied (a `Locked<Void>` would put its empty value where the thread sanitizer sees
    /// the mutex).
    private let applying = Locked<UInt64>(0)
    /// Changes held by merges not yet applied, by batch.
    private let held = Locked<[ObjectIdentifier: [QueryChange]]>([:])

    func add(_ query: ResourceQuery<Model>) {
        state.withLock { state in
            state.entries[ObjectIdentifier(query)] = Entry(query: query, plan: query.plan)
            Self.recount(&state)
        }
    }

    func refreshAll() async -> APIError? {
        let queries = state.withLock { $0.entries.values.compactMap(\.query) }
        var failure: APIError?
        for query in queries {
            do {
                try await query.refresh()
            } catch {
                failure = failure ?? APIError.wrapping(error, request: nil)
            }
        }
        return failure
    }

    func remove(_ identifier: ObjectIdentifier) {
        state.withLock { state in
            state.entries[identifier] = nil
            Self.recount(&state)
        }
    }

    private static func recount(_ state: inout State) {
        state.slots = []
        state.mask = 0
        state.hasUnevaluable = false
        for entry in state.entries.values {
            state.slots.formUnion(entry.plan.slots)
            state.mask |= entry.plan.filterMask | entry.plan.orderMask
            if !entry.plan.isEvaluable { state.hasUnevaluable = true }
        }
    }

    func note(_ change: QueryChange, in store: ResourceStore) {
        guard let batch = QueryBatch.current else {
            apply([change], in: store)
            return
        }
        let key = ObjectIdentifier(batch)
        let isFirst = held.withLock { held in
            defer { held[key, default: []].append(change) }
            return held[key] == nil
        }
        if isFirst {
            batch.add { [self] in self.apply(self.held.withLock { $0.removeValue(forKey: key) } ?? [], in: store) }
        }
    }

    /// Reads the values the queries need of each change that can matter to one, and hands them over.
    func apply(_ changes: [QueryChange], in store: ResourceStore) {
        let (queries, slots, mask, hasUnevaluable) = state.withLock { state in
            (state.entries.values.compactMap(\.query), state.slots, state.mask, state.hasUnevaluable)
        }
        guard !queries.isEmpty else { return }
        // One change per instance: a response may name a record twice (side-loaded and embedded).
        var relevant: [QueryChange] = []
        var instances: [Model] = []
        var positions = InstancePositions(capacity: changes.count)
        for change in changes {
            switch change.kind {
            case .created, .deleted: break
            case .merged where hasUnevaluable: break
            case .merged, .edited: guard change.mask & mask != 0 else { continue }
            }
            guard let instance = change.instance as? Model else { continue }
            if let position = positions.insert(ObjectIdentifier(instance), at: relevant.count) {
                relevant[position] = Self.combine(relevant[position], change)
            } else {
                relevant.append(change)
                instances.append(instance)
            }
        }
        guard !relevant.isEmpty else { return }
        let coder = FieldCoder(options: store.setup(for: Model.self).coding)
        // Observers are told after the lock is released: one may change an instance, which comes
        // back here.
        let notices = applying.withLock { batches in
            batches &+= 1
            let values = InstanceValues.read(instances, slots: slots, coder: coder)
            var facts: [ChangeFacts] = []
            facts.reserveCapacity(relevant.count)
            for (change, values) in zip(relevant, values) {
                facts.append(
                    ChangeFacts(
                        instance: ObjectIdentifier(change.instance), kind: change.kind, mask: change.mask,
                        isGone: values.isGone))
            }
            let changes = ChangeTable(facts, values: values, positions: positions, plans: queries.map(\.plan))
            return queries.compactMap { $0.apply(changes, instances: instances) }
        }
        for notice in notices { notice() }
    }

    /// Two changes to one instance as one: a delete or a create says the most, fields add up.
    private static func combine(_ first: QueryChange, _ second: QueryChange) -> QueryChange {
        var combined = first
        if second.kind == .deleted || (second.kind == .created && first.kind != .deleted) {
            combined.kind = second.kind
        }
        combined.mask |= second.mask
        return combined
    }
}

/// The changes of one merge, held until it has applied, so each live query hears of them at once.
final class QueryBatch: Sendable {
    /// The batch of the merge running in this task, if any.
    @TaskLocal static var current: QueryBatch?
    /// The live query whose own request this task runs: its answer's changes do not make it refetch.
    @TaskLocal static var fetchingQuery: ObjectIdentifier?

    // Only the task running the merge touches a batch; the lock is for the compiler's sake and is
    // never contended.
    private let flushes = Locked<[@Sendable () -> Void]>([])

    /// Adds what tells one model's queries of the changes held for them.
    func add(_ flush: @escaping @Sendable () -> Void) {
        flushes.withLock { $0.append(flush) }
    }

    /// Runs `announce` with changes held, then tells the queries.
    static func collecting(_ announce: () -> Void) {
        // Inside a batch already (the merges of a burst of pushed changes), changes join it.
        if current != nil { return announce() }
        let batch = QueryBatch()
        $current.withValue(batch) { announce() }
        for flush in batch.flushes.withLock({ $0 }) { flush() }
    }
}
