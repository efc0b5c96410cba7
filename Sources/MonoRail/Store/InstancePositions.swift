/// Positions by instance, for the changes of one batch: a large merge looks up every member of every
/// live query here, and a table probed by one multiply costs a fraction of `Dictionary`'s SipHash.
///
/// Open addressing with linear probing, at most half full; an instance's address is its key (no
/// live object sits at address 0).
struct InstancePositions: Sendable {
    private var keys: [UInt]
    private var positions: [Int]
    private var shift: UInt
    private var mask: Int
    private(set) var count = 0

    /// A table sized for `count` instances; it grows past them.
    init(capacity count: Int) {
        var bits: UInt = 3
        while 1 << bits < count * 2 { bits += 1 }
        keys = Array(repeating: 0, count: 1 << bits)
        positions = Array(repeating: 0, count: 1 << bits)
        shift = 64 - bits
        mask = (1 << bits) - 1
    }

    @inline(__always)
    private func slot(of key: UInt) -> Int {
        // Fibonacci hashing: the high bits of the product spread addresses that differ in few bits.
        Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The position of an instance, or `nil` when it has none.
    func position(of instance: ObjectIdentifier) -> Int? {
        let key = UInt(bitPattern: instance)
        var slot = slot(of: key)
        while true {
            let found = keys[slot]
            if found == key { return positions[slot] }
            if found == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Records an instance's position unless it has one; returns the one it had.
    mutating func insert(_ instance: ObjectIdentifier, at position: Int) -> Int? {
        insert(key: UInt(bitPattern: instance), at: position)
    }

    private mutating func insert(key: UInt, at position: Int) -> Int? {
        var slot = slot(of: key)
        while true {
            let found = keys[slot]
            if found == key { return positions[slot] }
            if found == 0 {
                keys[slot] = key
                positions[slot] = position
                count += 1
                if count * 2 > keys.count { grow() }
                return nil
            }
            slot = (slot + 1) & mask
        }
    }

    private mutating func grow() {
        var larger = InstancePositions(capacity: keys.count)
        for (key, position) in zip(keys, positions) where key != 0 {
            _ = larger.insert(key: key, at: position)
        }
        self = larger
    }
}
