import Foundation

/// A live query's filter and order, resolved against its model: which field each key names, the
/// parameters the server is sent, and how an instance is tested and placed.
///
/// Not generic over the model, but for its initializer: what a query runs per change is plain code,
/// not code that looks the model's layout up at run time.
struct QueryPlan: Sendable {
    typealias Slot = QuerySlot

    let conditions: [(slot: Slot, condition: QueryCondition)]
    /// The sort keys: where each is read, and whether it is descending.
    let orderSlots: [Slot]
    let descending: [Bool]
    /// The sort keys as one value: queries sorted alike share the keys of a batch's changes.
    var order: Order { Order(slots: orderSlots, descending: descending) }

    struct Order: Hashable, Sendable {
        let slots: [Slot]
        let descending: [Bool]
    }
    var isSorted: Bool { !orderSlots.isEmpty }
    /// Whether every condition and sort key names a field the query can read: if not, the query
    /// refetches on relevant change instead of evaluating.
    let isEvaluable: Bool
    /// The schema fields the filter reads; a change elsewhere cannot change membership.
    let filterFields: Set<Int>
    /// The schema fields the order reads.
    let orderFields: Set<Int>
    /// Every slot either reads.
    let slots: Set<Slot>
    /// ``filterFields`` and ``orderFields`` as ``QueryPlan/mask(_:)`` writes them.
    let filterMask: UInt64
    let orderMask: UInt64
    /// Whether the filter is empty: every record of the model belongs.
    var isUnfiltered: Bool { conditions.isEmpty }
    /// The filter and order as the server is sent them.
    let parameters: [String: JSONValue]

    init<Model: ResourceModel>(where filter: [String: QueryCondition], order: [QueryOrder], setup: ModelSetup<Model>) {
        let fields = Model.resourceSchema.fields
        // A key names the id, a field by its key on the wire, or a field by its Swift name.
        func resolve(_ key: String) -> (Slot, String)? {
            if key == setup.idKey { return (.id, key) }
            let index = setup.wireKeys.firstIndex(of: key) ?? fields.firstIndex { $0.name == key }
            guard let index else { return nil }
            // What a field embeds is not one comparable value.
            guard fields[index].embedded == nil else { return nil }
            return (.field(index), setup.wireKeys[index])
        }
        let conventions = setup.conventions
        var conditions: [(Slot, QueryCondition)] = []
        var sortKeys: [(Slot, Bool)] = []
        var evaluable = true
        var parameters: [String: JSONValue] = [:]
        for key in filter.keys.sorted() {
            guard let condition = filter[key] else { continue }
            let resolved = resolve(key)
            if let (slot, _) = resolved { conditions.append((slot, condition)) } else { evaluable = false }
            Self.write(condition, key: resolved?.1 ?? key, style: conventions.filterStyle, into: &parameters)
        }
        var orderText: [String] = []
        for item in order {
            let resolved = resolve(item.key)
            if let (slot, _) = resolved { sortKeys.append((slot, item.isDescending)) } else { evaluable = false }
            orderText.append((item.isDescending ? "-" : "") + (resolved?.1 ?? item.key))
        }
        if let name = conventions.orderParameter, !orderText.isEmpty {
            parameters[name] = .string(orderText.joined(separator: ","))
        }
        self.conditions = conditions
        self.orderSlots = sortKeys.map(\.0)
        self.descending = sortKeys.map(\.1)
        self.isEvaluable = evaluable
        self.parameters = parameters
        let filterFields = Self.fieldIndices(conditions.map(\.0))
        let orderFields = Self.fieldIndices(sortKeys.map(\.0))
        self.filterFields = filterFields
        self.orderFields = orderFields
        self.slots = Set(conditions.map(\.0) + sortKeys.map(\.0))
        self.filterMask = Self.mask(filterFields)
        self.orderMask = Self.mask(orderFields)
    }

    /// The schema field indices among `slots`.
    private static func fieldIndices(_ slots: [Slot]) -> Set<Int> {
        Set(
            slots.compactMap { slot in
                if case .field(let index) = slot { index } else { nil }
            })
    }

    /// Schema field indices as bits, for a test per change that costs one `and`: field 63 and later
    /// share the last bit, which can only make a change look relevant when it is not.
    static func mask(_ fields: some Sequence<Int>) -> UInt64 {
        fields.reduce(0) { $0 | (1 << UInt64(Swift.min(Swift.max($1, 0), 63))) }
    }

    /// A condition as query parameters, in the server family's style.
    private static func write(
        _ condition: QueryCondition, key: String, style: FilterStyle, into parameters: inout [String: JSONValue]
    ) {
        switch (condition, style) {
        case (.equals(let value), _):
            parameters[key] = value
        case (.isIn(let values), .brackets):
            parameters[key] = .array(values)
        case (.isIn(let values), .lookups):
            parameters[key + "__in"] = .string(values.map(text).joined(separator: ","))
        case (.range(let lower, let upper), .brackets):
            var bounds: [String: JSONValue] = [:]
            if let lower { bounds[lower.isIncluded ? "gte" : "gt"] = lower.value }
            if let upper { bounds[upper.isIncluded ? "lte" : "lt"] = upper.value }
            parameters[key] = .object(bounds)
        case (.range(let lower, let upper), .lookups):
            if let lower { parameters[key + (lower.isIncluded ? "__gte" : "__gt")] = lower.value }
            if let upper { parameters[key + (upper.isIncluded ? "__lte" : "__lt")] = upper.value }
        case (.isIn(let values), .jsonAPI):
            parameters["filter[\(key).in]"] = .string(values.map(text).joined(separator: ","))
        case (.range(let lower, let upper), .jsonAPI):
            if let lower { parameters["filter[\(key).\(lower.isIncluded ? "gte" : "gt")]"] = lower.value }
            if let upper { parameters["filter[\(key).\(upper.isIncluded ? "lte" : "lt")]"] = upper.value }
        }
    }

    private static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let string): string
        case .int(let int): String(int)
        case .uint(let uint): String(uint)
        case .double(let double): double.description
        case .bool(let bool): bool ? "true" : "false"
        case .null: ""
        case .array, .object: String(decoding: JSONWriter.serialize(value), as: UTF8.self)
        }
    }

    // MARK: - Evaluating

    /// Whether an instance's values meet every condition; unknown counts as not.
    func matches(_ values: InstanceValues) -> Bool {
        for (slot, condition) in conditions {
            guard let value = values[slot], condition.isMet(by: value) == true else { return false }
        }
        return true
    }

    /// Where an instance sorts: one number when the order is one key holding a number, which a
    /// large merge compares without a `JSONValue`; its values otherwise.
    func sortKey(_ values: InstanceValues) -> SortKey {
        if orderSlots.count == 1 {
            let value = values[orderSlots[0]] ?? .null
            if let rank = SortKey.rank(value, descending: descending[0]) { return .rank(rank) }
            return .values([value])
        }
        return .values(orderSlots.map { values[$0] ?? .null })
    }

    /// Positions sorted by their keys, ties by `tie` ascending: keys that are all numbers are compared
    /// as plain numbers.
    func sorted(
        _ positions: some Collection<Int>, by key: (Int) -> SortKey, ties tie: (Int) -> Int = { $0 }
    ) -> [Int] {
        var ranks: [(rank: Double, tie: Int, position: Int)] = []
        ranks.reserveCapacity(positions.count)
        for position in positions {
            guard case .rank(let rank) = key(position) else {
                return positions.sorted { lhs, rhs in
                    let order = compare(key(lhs), key(rhs))
                    return order == .orderedAscending || (order == .orderedSame && tie(lhs) < tie(rhs))
                }
            }
            ranks.append((rank, tie(position), position))
        }
        ranks.sort { $0.rank < $1.rank || ($0.rank == $1.rank && $0.tie < $1.tie) }
        return ranks.map(\.position)
    }

    /// The order of two sort keys.
    @inline(__always)
    func compare(_ lhs: SortKey, _ rhs: SortKey) -> ComparisonResult {
        if case .rank(let a) = lhs, case .rank(let b) = rhs {
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
        return compare(lhs.values(descending: descending), rhs.values(descending: descending))
    }

    private func compare(_ lhs: [JSONValue], _ rhs: [JSONValue]) -> ComparisonResult {
        let count = Swift.min(descending.count, lhs.count, rhs.count)
        var position = 0
        while position < count {
            let result = QueryValue.sortOrder(lhs[position], rhs[position])
            if result != .orderedSame {
                guard descending[position] else { return result }
                return result == .orderedAscending ? .orderedDescending : .orderedAscending
            }
            position += 1
        }
        return .orderedSame
    }
}

/// A place a live query reads a value from: a field of the schema, or the id.
enum QuerySlot: Hashable, Sendable {
    case id
    case field(Int)
}
