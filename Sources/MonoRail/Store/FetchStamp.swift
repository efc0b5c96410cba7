import Atomics
public import Foundation

/// When an answer was asked for: its place in the order of requests, which alone decides which of
/// two answers about a record is newer, and the wall-clock time, for ``ResourceModel/fetchedAt``
/// and a cached answer's age.
///
/// The wall clock can jump — set by hand, stepped back by NTP — so it never decides what is newer:
/// an answer asked for after another is newer even when the clock says it came a day earlier. The
/// order is one counter for the process, raised past the highest a storage holds when a store opens
/// it, so it keeps growing across launches.
public struct FetchStamp: Sendable, Hashable, Comparable {
    /// The place in the order of requests; `0` for a record kept by a version that had none.
    public var order: Int64
    /// The wall-clock time the request was sent.
    public var date: Date

    /// Creates a stamp.
    public init(order: Int64, date: Date) {
        self.order = order
        self.date = date
    }

    /// Ordered by ``order`` alone.
    public static func < (lhs: FetchStamp, rhs: FetchStamp) -> Bool { lhs.order < rhs.order }

    /// A new stamp, after every one made before it in this process and every one the opened
    /// storages hold.
    static func next(date: Date) -> FetchStamp {
        FetchStamp(order: counter.wrappingIncrementThenLoad(ordering: .relaxed), date: date)
    }

    /// Makes every later stamp come after `order`: a storage's highest.
    static func raise(above order: Int64) {
        // A damaged file's number cannot bring the counter near its end.
        let order = min(order, Int64.max / 2)
        var current = counter.load(ordering: .relaxed)
        while current < order {
            let (exchanged, found) = counter.compareExchange(
                expected: current, desired: order, ordering: .relaxed)
            if exchanged { return }
            current = found
        }
    }

    private static let counter = ManagedAtomic<Int64>(0)
}
