public import Benchmark

// What every benchmark target records its paired figures with.

/// A custom metric for a time or a ratio, where smaller is better, recorded as given.
public func metric(_ name: String) -> BenchmarkMetric {
    .custom(name, polarity: .prefersSmaller, useScalingFactor: false)
}

/// A duration in whole microseconds.
public func microseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
}

/// A duration in whole nanoseconds.
public func nanoseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
}

/// The median of a non-empty list.
public func median(_ values: [Int]) -> Int {
    values.sorted()[values.count / 2]
}

extension Array {
    /// The elements rotated left by `count`, so each side of a paired benchmark goes first in turn.
    public func shifted(by count: Int) -> [Element] {
        Array(self[count...] + self[..<count])
    }
}
