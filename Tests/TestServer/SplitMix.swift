/// SplitMix64: a seeded generator, so that a failing input can be made again.
public struct SplitMix: RandomNumberGenerator {
    /// Advances by a fixed odd step per number drawn.
    public var state: UInt64

    /// A generator whose numbers follow from `state`.
    public init(state: UInt64) {
        self.state = state
    }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
