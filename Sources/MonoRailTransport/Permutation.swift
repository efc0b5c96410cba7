/// Puts an array's elements in a new order in place, each moved once: not copied, so an element
/// that is a reference is neither retained nor released on the way. The live queries of the model
/// layer keep thousands of instances in order this way, where copies or swaps would touch each
/// instance's reference count, a cache miss per instance in a large list.
package enum Permutation {
    /// Rearranges `elements` so that the element at `slots[i]` comes to `i`.
    ///
    /// - Precondition: `slots` is a permutation of `elements.indices`; anything else is refused
    ///   before an element moves.
    package static func apply<Element>(_ slots: [Int], to elements: inout [Element]) {
        precondition(isPermutation(slots, count: elements.count), "not a permutation of the elements' indices")
        elements.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var placed = [Bool](repeating: false, count: buffer.count)
            // Each cycle in turn: its first element is carried while the others move up the cycle.
            for start in slots.indices where !placed[start] {
                placed[start] = true
                guard slots[start] != start else { continue }
                let carried = (base + start).move()
                var current = start
                while slots[current] != start {
                    (base + current).initialize(to: (base + slots[current]).move())
                    current = slots[current]
                    placed[current] = true
                }
                (base + current).initialize(to: carried)
            }
        }
    }

    /// Whether `slots` names each index below `count` once.
    private static func isPermutation(_ slots: [Int], count: Int) -> Bool {
        guard slots.count == count else { return false }
        var seen = [Bool](repeating: false, count: count)
        for slot in slots {
            guard slot >= 0, slot < count, !seen[slot] else { return false }
            seen[slot] = true
        }
        return true
    }
}
