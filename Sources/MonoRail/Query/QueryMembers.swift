import Foundation

/// The records a live query holds and their order, as instance identities and sort keys.
///
/// The work of keeping a query true runs here, in code that is not generic over the model: code
/// generic over it would look the model's layout up at run time at every step, and a merge that
/// moves 10,000 records in 100 queries takes a million steps. ``ResourceQuery`` keeps its instances
/// in the same order, replaying each ``Rearrangement``.
struct QueryMembers: Sendable {
    let plan: QueryPlan
    /// The members, in order.
    private(set) var ids: [ObjectIdentifier] = []
    /// Parallel to `ids` when the query is sorted.
    private var keys: [SortKey] = []
    private var lookup: Set<ObjectIdentifier> = []

    init(plan: QueryPlan) {
        self.plan = plan
    }

    func contains(_ instance: ObjectIdentifier) -> Bool { lookup.contains(instance) }

    mutating func removeAll() {
        ids = []
        keys = []
        lookup = []
    }

    /// Adds a record after the others, where the server listed it.
    mutating func append(_ instance: ObjectIdentifier, key: SortKey) {
        ids.append(instance)
        if plan.isSorted { keys.append(key) }
        lookup.insert(instance)
    }

    /// Puts a record in its place — after the ones it ties with, or last when unsorted — and
    /// returns the place.
    mutating func insert(_ instance: ObjectIdentifier, key: SortKey) -> Int {
        lookup.insert(instance)
        let position = place(of: key)
        ids.insert(instance, at: position)
        if plan.isSorted { keys.insert(key, at: position) }
        return position
    }

    private func place(of key: SortKey) -> Int {
        guard plan.isSorted else { return ids.count }
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if plan.compare(keys[middle], key) == .orderedDescending { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Whether a joining record belongs: while pages remain to load (`isPartial`), a sorted query
    /// holds only what sorts within the loaded ones.
    func fits(_ key: SortKey, isPartial: Bool) -> Bool {
        guard isPartial, plan.isSorted, let last = keys.last else { return true }
        return plan.compare(key, last) != .orderedDescending
    }

    // MARK: - Changes

    /// How the members changed, for the instances to follow.
    enum Rearrangement {
        /// A few changes: the members at `removals` removed one after the other, then the instances
        /// of the changes at `insertions` inserted one after the other.
        case steps(removals: [Int], insertions: [(position: Int, change: Int)])
        /// Many: the members rebuilt, each from an old position or a change.
        case rebuilt([Source])
    }

    /// Where an instance of a rebuilt list comes from.
    enum Source {
        /// The member at this position before: it stays or moves.
        case member(Int)
        /// The instance of the change at this position in the batch: it joins.
        case change(Int)
    }

    /// A record that joins or moves.
    private struct Arrival {
        /// The position of its change in the batch.
        let change: Int
        let key: SortKey
        /// Where it was, when it moves: `nil` for a record that joins, and for a move whose place
        /// is not found yet.
        var from: Int?
        /// Whether it was not a member.
        let joins: Bool
    }

    /// What one batch does, worked out before any of it is applied.
    private struct Outcome {
        /// Members that leave or move: by position, or by instance where the position is not known.
        var vacated: [Int] = []
        var vacating: Set<ObjectIdentifier> = []
        /// Members that leave.
        var departed: [ObjectIdentifier] = []
        var arriving: [Arrival] = []
        var total: Int?

        var isEmpty: Bool { vacated.isEmpty && vacating.isEmpty && arriving.isEmpty }

        mutating func vacate(_ instance: ObjectIdentifier, at position: Int?) {
            if let position { vacated.append(position) } else { vacating.insert(instance) }
        }

        mutating func depart(_ instance: ObjectIdentifier, at position: Int?) {
            vacate(instance, at: position)
            departed.append(instance)
            total = total.map { Swift.max(0, $0 - 1) }
        }
    }

    /// Applies a batch of changes: members leave, move and join, and `total` follows. Returns how
    /// the members changed, or `nil` when they did not.
    mutating func apply(_ changes: ChangeTable, total: inout Int?, isPartial: Bool) -> Rearrangement? {
        var outcome = Outcome(total: total)
        let facts = changes.facts
        let sortKeys = plan.isSorted ? changes.sortKeys[plan.order] : nil
        if facts.count > ids.count {
            // More changes than members: each member looks its change up, and only changes that can
            // make a record match are tested against the filter.
            for position in ids.indices {
                guard let change = changes.positions.position(of: ids[position]) else { continue }
                settle(member: position, change, of: changes, keys: sortKeys, into: &outcome)
            }
            if plan.filterMask & changes.writeMask == 0 {
                for change in changes.creates where !lookup.contains(facts[change].instance) {
                    consider(change, of: changes, keys: sortKeys, isPartial: isPartial, into: &outcome)
                }
            } else {
                for change in facts.indices where !lookup.contains(facts[change].instance) {
                    consider(change, of: changes, keys: sortKeys, isPartial: isPartial, into: &outcome)
                }
            }
        } else {
            for change in facts.indices {
                if lookup.contains(facts[change].instance) {
                    settle(member: nil, change, of: changes, keys: sortKeys, into: &outcome)
                } else {
                    consider(change, of: changes, keys: sortKeys, isPartial: isPartial, into: &outcome)
                }
            }
        }
        total = outcome.total
        guard !outcome.isEmpty else { return nil }
        var vacated = outcome.vacated
        if !outcome.vacating.isEmpty {
            var found: [ObjectIdentifier: Int] = [:]
            for (position, member) in ids.enumerated() where outcome.vacating.contains(member) {
                vacated.append(position)
                found[member] = position
            }
            for index in outcome.arriving.indices where !outcome.arriving[index].joins {
                outcome.arriving[index].from = found[facts[outcome.arriving[index].change].instance]
            }
        }
        for instance in outcome.departed { lookup.remove(instance) }
        for arrival in outcome.arriving where arrival.joins { lookup.insert(facts[arrival.change].instance) }
        guard vacated.count + outcome.arriving.count > 16 else {
            let removals = vacated.sorted(by: >)
            for position in removals {
                ids.remove(at: position)
                if plan.isSorted { keys.remove(at: position) }
            }
            let insertions = outcome.arriving.map { arrival in
                (insert(facts[arrival.change].instance, key: arrival.key), arrival.change)
            }
            return .steps(removals: removals, insertions: insertions)
        }
        return .rebuilt(rebuild(vacated: vacated, arriving: outcome.arriving, changes: changes))
    }

    /// What a change does to a member: it leaves, moves, or stays where it is. `position` is its
    /// place, when known; `keys` are the changes' sort keys in the query's order.
    private func settle(
        member position: Int?, _ change: Int, of changes: ChangeTable, keys: [SortKey]?, into outcome: inout Outcome
    ) {
        let fact = changes.facts[change]
        if fact.isGone || fact.kind == .deleted {
            outcome.depart(fact.instance, at: position)
            return
        }
        guard plan.isEvaluable else { return }
        if fact.isWrite, fact.mask & (plan.filterMask | plan.orderMask) == 0 { return }
        if fact.kind == .created || fact.mask & plan.filterMask != 0, !plan.matches(changes.values[change]) {
            outcome.depart(fact.instance, at: position)
        } else if plan.isSorted, fact.mask & plan.orderMask != 0 {
            // Out of its place, into its new one.
            outcome.vacate(fact.instance, at: position)
            let key = keys?[change] ?? plan.sortKey(changes.values[change])
            outcome.arriving.append(Arrival(change: change, key: key, from: position, joins: false))
        }
    }

    /// What a change does to a record the query does not hold: it joins when it now matches.
    private func consider(
        _ change: Int, of changes: ChangeTable, keys: [SortKey]?, isPartial: Bool, into outcome: inout Outcome
    ) {
        let fact = changes.facts[change]
        guard plan.isEvaluable, !fact.isGone, fact.kind != .deleted else { return }
        guard fact.kind == .created || fact.mask & plan.filterMask != 0, plan.matches(changes.values[change]) else {
            return
        }
        outcome.total = outcome.total.map { $0 + 1 }
        let key = keys?[change] ?? plan.sortKey(changes.values[change])
        if fits(key, isPartial: isPartial) {
            outcome.arriving.append(Arrival(change: change, key: key, from: nil, joins: true))
        }
    }

    /// Many changes at once: the members that stay, merged with the arriving ones sorted, in one
    /// pass rather than one search and one shift per change.
    private mutating func rebuild(vacated: [Int], arriving: [Arrival], changes: ChangeTable) -> [Source] {
        let facts = changes.facts
        var stays = [Bool](repeating: true, count: ids.count)
        for position in vacated { stays[position] = false }
        var sources: [Source] = []
        sources.reserveCapacity(ids.count - vacated.count + arriving.count)
        guard plan.isSorted else {
            for position in ids.indices where stays[position] { sources.append(.member(position)) }
            for arrival in arriving { sources.append(.change(arrival.change)) }
            ids = sources.map { source in
                switch source {
                case .member(let position): ids[position]
                case .change(let change): facts[change].instance
                }
            }
            return sources
        }
        let sorted = order(of: arriving, in: changes)
        var newIDs: [ObjectIdentifier] = []
        var newKeys: [SortKey] = []
        newIDs.reserveCapacity(sources.capacity)
        newKeys.reserveCapacity(sources.capacity)
        func take(_ arrival: Arrival) {
            sources.append(arrival.from.map(Source.member) ?? .change(arrival.change))
            newIDs.append(facts[arrival.change].instance)
            newKeys.append(arrival.key)
        }
        var next = 0
        for position in ids.indices where stays[position] {
            // An arriving record goes before the first member it sorts strictly before.
            while next < sorted.count, plan.compare(arriving[sorted[next]].key, keys[position]) == .orderedAscending {
                take(arriving[sorted[next]])
                next += 1
            }
            sources.append(.member(position))
            newIDs.append(ids[position])
            newKeys.append(keys[position])
        }
        for index in sorted[next...] { take(arriving[index]) }
        ids = newIDs
        keys = newKeys
        return sources
    }

    /// The arriving records' positions, sorted; ties keep the order their changes came in.
    private func order(of arriving: [Arrival], in changes: ChangeTable) -> [Int] {
        // Many: by the changes' places in the whole batch, sorted once for every query sorted alike.
        if arriving.count >= 32, let keys = changes.sortKeys[plan.order] {
            let ranks = changes.orders.ranks(in: plan, keys: keys)
            return Self.radixSorted(arriving.indices, by: { ranks[arriving[$0].change] }, below: ranks.count)
        }
        return plan.sorted(arriving.indices, by: { arriving[$0].key }, ties: { arriving[$0].change })
    }

    /// Positions sorted by distinct integers below `limit`, a byte at a time: linear in the positions.
    private static func radixSorted(_ positions: Range<Int>, by value: (Int) -> Int, below limit: Int) -> [Int] {
        var sorted = Array(positions)
        var scratch = sorted
        var shift = 0
        repeat {
            var starts = [Int](repeating: 0, count: 257)
            for position in sorted { starts[((value(position) >> shift) & 0xFF) + 1] += 1 }
            for digit in 1..<257 { starts[digit] += starts[digit - 1] }
            for position in sorted {
                let digit = (value(position) >> shift) & 0xFF
                scratch[starts[digit]] = position
                starts[digit] += 1
            }
            swap(&sorted, &scratch)
            shift += 8
        } while limit > 1 << shift
        return sorted
    }
}
