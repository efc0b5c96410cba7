import Foundation

/// The keys one `CodingKey` type has asked for in one decoding context (one decode call, or one
/// batch of fields), each under a small number (its slot), and what the last object read with them
/// looked like.
///
/// Finding a member by comparing its name with every key of the object would cost a comparison
/// per member per lookup. Instead an object is *tagged* once: each of its keys gets the slot of
/// the table key it equals (checked against the slot the same position held in the last object —
/// records in a list have the same keys in the same order — so usually one comparison). A lookup
/// is then the member the last object had the slot at, checked by its tag. Equal keys keep the tree's
/// rule that the last one wins: a tagging that sees a slot twice marks the object for a full search.
final class KeyTable {
    /// More keys than this (a type reading keys it makes up) and new ones are searched for instead.
    static let capacity = 64
    static let untagged = UInt16.max

    let id: UInt32
    // A table belongs to one decoding context, used on one thread, and no access to these overlaps
    // another: the runtime's exclusivity checks, which cost as much as the lookups, are left out.
    /// The Swift names asked for, by slot.
    @exclusivity(unchecked) private var names: [String] = []
    /// Their wire keys, by slot: as strings, and as bytes when ASCII (empty otherwise).
    @exclusivity(unchecked) private var wires: [String] = []
    @exclusivity(unchecked) private var wireBytes: [UInt8] = []
    @exclusivity(unchecked) private var wireRanges: [Range<Int>] = []
    @exclusivity(unchecked) private var wireIsASCII: [Bool] = []
    /// The slot asked for last: the next is usually the one after.
    @exclusivity(unchecked) private var lastSlot = -1
    /// From the last tagging: the slot of each member position, and each slot's entry offset.
    @exclusivity(unchecked) private var slotAtMember: [UInt16] = []
    @exclusivity(unchecked) private(set) var offsetOfSlot: [Int] = []

    init(id: UInt32) {
        self.id = id
    }

    var count: Int { names.count }

    /// The slot of the key named `name`, added when new; `nil` when the table is full.
    @inline(__always) func slot(for name: String, wireKeys: WireKeyCache) -> Int? {
        let next = lastSlot &+ 1
        if next < names.count, names[next] == name {
            lastSlot = next
            return next
        }
        return search(name, wireKeys: wireKeys)
    }

    private func search(_ name: String, wireKeys: WireKeyCache) -> Int? {
        if let slot = names.firstIndex(of: name) {
            lastSlot = slot
            return slot
        }
        guard names.count < Self.capacity else { return nil }
        let wire = wireKeys.wireKey(for: name)
        names.append(name)
        wires.append(wire)
        let isASCII = wire.utf8.allSatisfy { $0 < 0x80 }
        let start = wireBytes.count
        if isASCII { wireBytes.append(contentsOf: wire.utf8) }
        wireRanges.append(start..<wireBytes.count)
        wireIsASCII.append(isASCII)
        offsetOfSlot.append(0)
        lastSlot = names.count - 1
        return lastSlot
    }

    /// The entry index of the key of the last member of `object` whose key is the wire key of
    /// `name`; the value is the entry after it.
    func member(_ name: String, of object: Int, in tape: JSONTape, wireKeys: WireKeyCache) -> Int? {
        guard let slot = slot(for: name, wireKeys: wireKeys) else {
            return Self.search(wireKeys.wireKey(for: name), in: object, of: tape)
        }
        var entry = tape[object]
        if entry.owner != id || slot >= Int(entry.tag) {
            tag(object, in: tape)
            entry = tape[object]
        }
        let end = Int(entry.start)
        let repeats = entry.flags & JSONTape.Entry.hasRepeatedKeys != 0
        if !repeats {
            let candidate = object + offsetOfSlot[slot]
            if candidate > object, candidate < end {
                let key = tape[candidate]
                if key.kind == .key, key.owner == object, key.tag == slot { return candidate }
            }
        }
        var found: Int?
        var member = object + 1
        while member < end {
            if tape[member].tag == slot {
                found = member
                if !repeats { break }
            }
            member = tape.next(after: member + 1)
        }
        return found
    }

    /// The entry index of the key of the last member of `object` whose key is `wire`, compared as
    /// Swift strings compare: for keys no table holds.
    static func search(_ wire: String, in object: Int, of tape: JSONTape) -> Int? {
        var found: Int?
        let end = Int(tape[object].start)
        var key = object + 1
        while key < end {
            if tape.string(at: key) == wire { found = key }
            key = tape.next(after: key + 1)
        }
        return found
    }

    /// Whether the key entry at `index` equals the wire key in `slot`, as Swift strings compare.
    @inline(__always) func key(at index: Int, in tape: JSONTape, equals slot: Int) -> Bool {
        if wireIsASCII[slot] && tape[index].isPlainASCII {
            let text = tape.text(at: index)
            let range = wireRanges[slot]
            guard text.count == range.count else { return false }
            guard let lhs = text.baseAddress else { return range.isEmpty }
            return wireBytes.withUnsafeBufferPointer { wire in
                guard let rhs = wire.baseAddress else { return range.isEmpty }
                return memcmp(lhs, rhs + range.lowerBound, range.count) == 0
            }
        }
        // Canonical equivalence decides, as for the tree's dictionary keys ("\u{212A}" is "K").
        return tape.string(at: index) == wires[slot]
    }

    /// Tags the keys of the object at `object` with this table's slots.
    func tag(_ object: Int, in tape: JSONTape) {
        let end = Int(tape[object].start)
        var seen: UInt64 = 0
        var repeats = false
        var key = object + 1
        var position = 0
        while key < end {
            var slot = Self.untagged
            if position < slotAtMember.count, slotAtMember[position] != Self.untagged,
                self.key(at: key, in: tape, equals: Int(slotAtMember[position]))
            {
                slot = slotAtMember[position]
            } else if let found = (0..<names.count).first(where: { self.key(at: key, in: tape, equals: $0) }) {
                slot = UInt16(found)
            }
            tape[key].tag = slot
            if slot != Self.untagged {
                let bit: UInt64 = 1 << UInt64(slot)
                if seen & bit != 0 { repeats = true }
                seen |= bit
                offsetOfSlot[Int(slot)] = key - object
            }
            if position < slotAtMember.count {
                slotAtMember[position] = slot
            } else if position < 4 * Self.capacity {
                slotAtMember.append(slot)
            }
            key = tape.next(after: key + 1)
            position += 1
        }
        var entry = tape[object]
        entry.owner = id
        entry.tag = UInt16(names.count)
        entry.flags = repeats ? JSONTape.Entry.hasRepeatedKeys : 0
        tape[object] = entry
    }
}
