import MonoRailTransport
import Testing

/// The in-place permutation live queries keep their instances in order with.
@Suite("Permutation: every element moved once, in place")
struct PermutationTests {
    final class Element: Sendable {
        let value: Int
        let released: Locked<Int>

        init(_ value: Int, released: Locked<Int>) {
            self.value = value
            self.released = released
        }

        deinit { released.withLock { $0 += 1 } }
    }

    @Test("random permutations of 0 to 300 elements land as the slots say, none released or duplicated")
    func randomPermutations() {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 2, 3, 7, 64, 300] {
            for _ in 0..<20 {
                let released = Locked(0)
                do {
                    var elements = (0..<count).map { Element($0, released: released) }
                    let originals = elements
                    let slots = Array(0..<count).shuffled(using: &generator)
                    Permutation.apply(slots, to: &elements)
                    #expect(elements.map(\.value) == slots)
                    #expect(zip(elements, slots).allSatisfy { $0 === originals[$1] })
                    #expect(released.withLock { $0 } == 0)
                }
                // Each element released once, with the arrays: none was copied over or leaked.
                #expect(released.withLock { $0 } == count)
            }
        }
    }

    @Test("the identity and a single long cycle")
    func identityAndOneCycle() {
        var values = Array(0..<10)
        Permutation.apply(Array(0..<10), to: &values)
        #expect(values == Array(0..<10))
        Permutation.apply(Array(1..<10) + [0], to: &values)
        #expect(values == Array(1..<10) + [0])
    }
}
