/// A set of a model's field indices, as bits: a record's first 64 fields cost no allocation.
struct FieldSet {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    var count: Int { high.reduce(low.nonzeroBitCount) { $0 + $1.nonzeroBitCount } }

    /// Adds `index`; `false` when it was already in.
    @inline(__always) mutating func insert(_ index: Int) -> Bool {
        if index < 64 {
            defer { low |= 1 << UInt64(index) }
            return low & (1 << UInt64(index)) == 0
        }
        let word = index / 64 - 1
        if word >= high.count { high += [UInt64](repeating: 0, count: word - high.count + 1) }
        let bit: UInt64 = 1 << UInt64(index % 64)
        defer { high[word] |= bit }
        return high[word] & bit == 0
    }

    func contains(_ index: Int) -> Bool {
        if index < 64 { return low & (1 << UInt64(index)) != 0 }
        let word = index / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(index % 64)) != 0
    }

    /// For each of `count` fields, whether it is in the set and not in `removed`.
    func present(of count: Int, removing removed: FieldSet) -> [Bool] {
        (0..<count).map { contains($0) && !removed.contains($0) }
    }
}
