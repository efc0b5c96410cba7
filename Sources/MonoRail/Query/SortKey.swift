/// Where a record sorts in a live query.
///
/// A query sorted by one key that holds a number — the common case — keeps that number, negated
/// when descending, so a merge that moves thousands of records compares and copies plain numbers.
enum SortKey: Sendable {
    /// The one sort key's value as a number ordering as ``QueryValue/sortOrder(_:_:)`` does:
    /// `null` is `-infinity`, a descending key is negated.
    case rank(Double)
    /// The values of each sort key, in order.
    case values([JSONValue])

    /// A value as a rank, or `nil` when it is not a number a `Double` holds exactly.
    static func rank(_ value: JSONValue, descending: Bool) -> Double? {
        let number: Double
        switch value {
        case .null: number = -.infinity
        case .double(let double) where double.isFinite: number = double
        case .int(let int) where int.magnitude <= 1 << 53: number = Double(int)
        default: return nil
        }
        return descending ? -number : number
    }

    /// The values the key stands for, to compare with a key that is not a rank.
    func values(descending: [Bool]) -> [JSONValue] {
        switch self {
        case .values(let values): return values
        case .rank(let rank):
            let number = descending.first == true ? -rank : rank
            return [number == -.infinity ? .null : .double(number)]
        }
    }
}
