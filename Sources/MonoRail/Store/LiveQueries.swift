import Foundation
import MonoRailTransport

/// One change to an instance, as live queries are told of it.
struct QueryChange<Model: ResourceModel>: Sendable {
    let instance: Model
    let kind: ResourceUpdate<Model>.Kind
    /// The schema fields that changed.
    var fields: [Int]
    var values = RecordValues()
    /// `fields` as ``QueryPlan/mask(_:)`` writes them.
    var mask: UInt64 = 0
}

/// The live queries of one model in a store, told of every change to its instances.
///
/// Queries are held weakly: one the app drops stops being told. Changes made by one merge are told
/// together, once the merge has applied (``QueryBatch``), so a query moves once per response, not
/// once per record.
final class ModelQueries<Model: ResourceModel>: Sendable {
    private struct Entry {
        weak var query: ResourceQuery<Model>?
        let plan: QueryPlan<Model>
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// What any query reads.
        var slots: Set<QuerySlot> = []
        var fields: Set<Int> = []
        var hasUnevaluable = false
    }

    private let state = Locked(State())
    /// Held while changes are read and applied, so that of two changes to one instance the one
    /// applied last read the newer values, whatever order their announcements ran in. Counts the
    /// batches applied (a `Locked<Void>` would put its empty value where the thread sanitizer sees
    /// the mutex).
    private let applying = Locked<UInt64>(0)

    func add(_ query: ResourceQuery<Model>) {
        state.withLock { state in
            state.entries[ObjectIdentifier(query)] = Entry(query: query, plan: query.plan)
            Self.recount(&state)
        }
    }

    func remove(_ identifier: ObjectIdentifier) {
        state.withLock { state in
            state.entries[identifier] = nil
            Self.recount(&state)
        }
    }

    private static func recount(_ state: inout State) {
        state.slots = []
        state.fields = []
        state.hasUnevaluable = false
        for entry in state.entries.values {
            state.slots.formUnion(entry.plan.slots)
            state.fields.formUnion(entry.plan.filterFields)
            state.fields.formUnion(entry.plan.orderFields)
            if !entry.plan.isEvaluable { state.hasUnevaluable = true }
        }
    }

    /// Tells the queries of a change: now, or when the merge that made it has applied.
    func note(_ instance: Model, kind: ResourceUpdate<Model>.Kind, fields: [Int], in store: ResourceStore) {
        let change = QueryChange(instance: instance, kind: kind, fields: fields)
        if let batch = QueryBatch.current {
            batch.add(change, to: self, in: store)
        } else {
            apply([change], in: store)
        }
    }

    /// Reads the values the queries need of each change that can matter to one, and hands them over.
    func apply(_ changes: [QueryChange<Model>], in store: ResourceStore) {
        let (queries, slots, fields, hasUnevaluable) = state.withLock { state in
            (state.entries.values.compactMap(\.query), state.slots, state.fields, state.hasUnevaluable)
        }
        guard !queries.isEmpty else { return }
        // One change per instance: a response may name a record twice (side-loaded and embedded).
        var relevant: [QueryChange<Model>] = []
        var positions: [ObjectIdentifier: Int] = [:]
        for change in changes {
            switch change.kind {
            case .created, .deleted: break
            case .merged where hasUnevaluable: break
            case .merged, .edited, .reverted: guard change.fields.contains(where: fields.contains) else { continue }
            }
            let identifier = ObjectIdentifier(change.instance)
            if let position = positions[identifier] {
                relevant[position] = Self.combine(relevant[position], change)
            } else {
                positions[identifier] = relevant.count
                relevant.append(change)
            }
        }
        guard !relevant.isEmpty else { return }
        let coder = FieldCoder(options: store.setup(for: Model.self).coding)
        // Observers are told after the lock is released: one may change an instance, which comes
        // back here.
        let notices = applying.withLock { batches in
            batches &+= 1
            for index in relevant.indices {
                relevant[index].values = RecordValues.read(relevant[index].instance, slots: slots, coder: coder)
                relevant[index].mask = QueryPlan<Model>.mask(relevant[index].fields)
            }
            return queries.compactMap { $0.apply(relevant) }
        }
        for notice in notices { notice() }
    }

    /// Two changes to one instance as one: a delete or a create says the most, fields add up.
    private static func combine(_ first: QueryChange<Model>, _ second: QueryChange<Model>) -> QueryChange<Model> {
        var combined = first
        if second.kind == .deleted || (second.kind == .created && first.kind != .deleted) {
            combined = QueryChange(instance: first.instance, kind: second.kind, fields: first.fields)
        }
        combined.fields = Array(Set(first.fields).union(second.fields))
        return combined
    }
}

/// The changes of one merge, held until it has applied, so each live query hears of them at once.
final class QueryBatch: Sendable {
    /// The batch of the merge running in this task, if any.
    @TaskLocal static var current: QueryBatch?
    /// The live query whose own request this task runs: its answer's changes do not make it refetch.
    @TaskLocal static var fetchingQuery: ObjectIdentifier?

    private protocol Pending: AnyObject, Sendable {
        func flush()
    }

    private final class Changes<Model: ResourceModel>: Pending {
        let queries: ModelQueries<Model>
        let store: ResourceStore
        let changes = Locked<[QueryChange<Model>]>([])

        init(queries: ModelQueries<Model>, store: ResourceStore) {
            self.queries = queries
            self.store = store
        }

        func flush() { queries.apply(changes.withLock { $0 }, in: store) }
    }

    // Only the task running the merge touches a batch; its locks are for the compiler's sake and
    // are never contended.
    private let pending = Locked<[(ObjectIdentifier, any Pending)]>([])

    func add<Model: ResourceModel>(
        _ change: QueryChange<Model>, to queries: ModelQueries<Model>, in store: ResourceStore
    ) {
        let identifier = ObjectIdentifier(queries)
        pending.withLock { pending in
            if let existing = pending.first(where: { $0.0 == identifier })?.1 as? Changes<Model> {
                existing.changes.withLock { $0.append(change) }
            } else {
                let made = Changes(queries: queries, store: store)
                made.changes.withLock { $0.append(change) }
                pending.append((identifier, made))
            }
        }
    }

    /// Runs `announce` with changes held, then tells the queries.
    static func collecting(_ announce: () -> Void) {
        let batch = QueryBatch()
        $current.withValue(batch) { announce() }
        let pending = batch.pending.withLock { $0 }
        for (_, changes) in pending { changes.flush() }
    }
}
