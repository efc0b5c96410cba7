import Foundation

/// The changes of one batch as every live query of a model reads them: read once, then looked up
/// by each query — by instance for the members it holds, in full only for what may join it.
struct ChangeTable {
    let facts: [ChangeFacts]
    /// The values of each change's instance.
    let values: [InstanceValues]
    /// Where each change's instance sorts, for each order a query has: worked out once for all the
    /// queries sorted alike.
    let sortKeys: [QueryPlan.Order: [SortKey]]
    /// The position of each instance's fact.
    let positions: InstancePositions
    /// The facts of records created or first seen: they may join a query whatever fields it reads.
    let creates: [Int]
    /// The fields any write changed, as ``QueryPlan/mask(_:)`` writes them.
    let writeMask: UInt64
    /// The changes in each order, worked out when a query first needs it.
    let orders = ChangeOrders()

    /// `positions` says where each instance's fact is in `facts`; `plans` are the plans of the
    /// queries to be told.
    init(_ facts: [ChangeFacts], values: [InstanceValues], positions: InstancePositions, plans: [QueryPlan]) {
        self.facts = facts
        self.values = values
        var sortKeys: [QueryPlan.Order: [SortKey]] = [:]
        for plan in plans where plan.isSorted && sortKeys[plan.order] == nil {
            sortKeys[plan.order] = values.map(plan.sortKey)
        }
        self.sortKeys = sortKeys
        var creates: [Int] = []
        var writeMask: UInt64 = 0
        for (position, fact) in facts.enumerated() {
            if fact.kind == .created { creates.append(position) }
            if fact.isWrite { writeMask |= fact.mask }
        }
        self.positions = positions
        self.creates = creates
        self.writeMask = writeMask
    }
}

/// The changes of a batch in the order of each query's sort keys, worked out on first use and shared
/// by the queries sorted alike: a merge that moves every record sorts it once, and each query then
/// puts its own arrivals in order in linear time.
///
/// Not `Sendable`: it lives within one batch's application, under the model's lock.
final class ChangeOrders {
    private var ranks: [QueryPlan.Order: [Int]] = [:]

    /// Each change's place among all of them in `plan`'s order — by key, ties by position in the
    /// batch — given their keys in that order.
    func ranks(in plan: QueryPlan, keys: [SortKey]) -> [Int] {
        if let known = ranks[plan.order] { return known }
        var ranks = [Int](repeating: 0, count: keys.count)
        for (rank, change) in plan.sorted(keys.indices, by: { keys[$0] }).enumerated() { ranks[change] = rank }
        self.ranks[plan.order] = ranks
        return ranks
    }
}
