/// Where every value of a JSON text lies: one flat run of 16-byte entries, filled by one walk that
/// checks the text exactly as ``JSONParser`` does (``JSONCursor/walkValue(depth:into:)``). Numbers
/// are parsed once into their entries; strings stay bytes until a decoder asks for one. Nothing is
/// built per value — no dictionaries, no strings, no nodes — so a `Decodable` type reads the text
/// with a cost close to that of finding its structure.
///
/// Entries are in text order. A container's entry is followed by its contents — an object's as
/// key, value, key, value — and records the index just past them, so any value is skipped in one step.
/// Byte offsets are 32-bit: a text of 4 GiB or more is not taped (``init(_:maxDepth:)`` returns `nil`).
package final class JSONTape {
    package enum Kind: UInt8 {
        case null, `false`, `true`, int, uint, double, string, key, array, object
    }

    /// One value or key. The meaning of the three words depends on the kind:
    /// - `string`, `key`: `start`..<`end` are the bytes between the quotes; `owner` is, for a key,
    ///   the index of its object. `tag` is a key's slot in the ``KeyTable`` that last read its object.
    /// - `int`, `uint`, `double`: the value's 64 bits, low word in `start`, high in `end`.
    /// - `array`, `object`: `start` is the index past the contents, `end` the count of elements or
    ///   members. An object's `owner` is the ``KeyTable`` that last tagged its keys and `tag` how
    ///   many of that table's keys it was tagged for.
    package struct Entry {
        package var kind: Kind
        package var flags: UInt8
        package var tag: UInt16
        package var start: UInt32
        package var end: UInt32
        package var owner: UInt32

        /// On a string or key: its bytes hold a backslash escape.
        static let hasEscapes: UInt8 = 1
        /// On a key: it holds a byte outside ASCII.
        static let isNotASCII: UInt8 = 2
        /// On an object: two of its keys are equal; a lookup must find the last, as the tree keeps it.
        static let hasRepeatedKeys: UInt8 = 4

        var bits: UInt64 { UInt64(start) | UInt64(end) << 32 }
        /// A key whose bytes are its text: compared byte for byte when the other side is ASCII too.
        var isPlainASCII: Bool { flags & (Self.hasEscapes | Self.isNotASCII) == 0 }
    }

    // A tape serves one decode call at a time on one thread, and no access to these overlaps
    // another: the runtime's exclusivity checks, which cost as much as the reads, are left out.
    /// The text; valid only while the call that taped it runs.
    @exclusivity(unchecked) package private(set) var bytes: UnsafeBufferPointer<UInt8>
    @exclusivity(unchecked) package private(set) var maxDepth: Int
    @exclusivity(unchecked) package private(set) var entries: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) package private(set) var count = 0
    @exclusivity(unchecked) private var capacity: Int
    /// Whether ``bytes`` may still be read: a decoder kept past its call finds it closed.
    @exclusivity(unchecked) package private(set) var isOpen = false
    /// Counts the texts taped: a decoder made for an earlier one finds this changed, and so
    /// the tape closed to it, though a tape reused for the next value is open again.
    @exclusivity(unchecked) package private(set) var generation = 0

    /// An empty tape with room for `capacity` entries, to be filled and refilled (``fill(valueAt:depth:)``).
    package init(capacity: Int = 16) {
        self.bytes = UnsafeBufferPointer(start: nil, count: 0)
        self.maxDepth = 0
        self.capacity = max(capacity, 1)
        self.entries = .allocate(capacity: self.capacity)
    }

    /// Tapes one JSON text — surrounding whitespace allowed, nothing after the value.
    ///
    /// - Returns: `nil` for a text of 4 GiB or more.
    /// - Throws: ``JSONSyntaxError``, the same as ``JSONParser/parse(_:)`` throws for the text.
    package convenience init?(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(JSONSyntaxError) {
        // About one entry per twelve bytes of ordinary JSON; past a million entries (16 MB) the
        // tape grows only as checked text fills it, so no body claims memory before it is read.
        self.init(capacity: min(bytes.count / 12 + 16, 1 << 20))
        var cursor = JSONCursor(bytes, maxDepth: maxDepth)
        cursor.skipWhitespace()
        let taped = try fill(valueAt: &cursor, depth: 0) { cursor throws(JSONSyntaxError) in
            cursor.skipWhitespace()
            guard cursor.isAtEnd else { throw cursor.error("unexpected data after the JSON value") }
        }
        guard taped else { return nil }
    }

    /// Tapes the one value at the cursor, which ends past it, in place of what the tape held;
    /// `depth` is the nesting of the arrays and objects around it, counted against the cursor's
    /// limit as in a whole text.
    ///
    /// - Returns: `false`, taping nothing, for a text of 4 GiB or more.
    /// - Throws: ``JSONSyntaxError``, the same as ``JSONParser`` throws for the value.
    package func fill(valueAt cursor: inout JSONCursor, depth: Int) throws(JSONSyntaxError) -> Bool {
        try fill(valueAt: &cursor, depth: depth) { _ throws(JSONSyntaxError) in }
    }

    private func fill(
        valueAt cursor: inout JSONCursor, depth: Int, then finish: (inout JSONCursor) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) -> Bool {
        isOpen = false
        generation += 1
        count = 0
        guard cursor.bytes.count < Int(UInt32.max) else { return false }
        var writer = Writer(entries: entries, capacity: capacity)
        // The writer may have moved the entries to a larger buffer: the tape takes whichever it ends with.
        defer {
            entries = writer.entries
            capacity = writer.capacity
        }
        try cursor.walkValue(depth: depth, into: &writer)
        try finish(&cursor)
        bytes = cursor.bytes
        maxDepth = cursor.maxDepth
        count = writer.count
        isOpen = true
        return true
    }

    deinit { entries.deallocate() }

    /// Marks the text as gone: called when the call that lent it returns.
    package func close() { isOpen = false }

    @inline(__always) package subscript(index: Int) -> Entry {
        get { entries[index] }
        set { entries[index] = newValue }
    }

    /// The index just past the value at `index`.
    @inline(__always) package func next(after index: Int) -> Int {
        let entry = entries[index]
        return entry.kind.rawValue >= Kind.array.rawValue ? Int(entry.start) : index + 1
    }

    /// The bytes of the string or key at `index`, between its quotes.
    @inline(__always) package func text(at index: Int) -> UnsafeBufferPointer<UInt8> {
        let entry = entries[index]
        return UnsafeBufferPointer(rebasing: bytes[Int(entry.start)..<Int(entry.end)])
    }

    /// The byte offset where the value at `index` starts, when it is the whole text or a member's
    /// value (found past its key and colon); `nil` for an array's element.
    package func offset(ofValueAt index: Int) -> Int? {
        var cursor = JSONCursor(bytes, maxDepth: maxDepth)
        if index > 0 {
            let key = entries[index - 1]
            guard key.kind == .key else { return nil }
            cursor.offset = Int(key.end) + 1
            cursor.skipWhitespace()
            // The text was checked: a colon follows the key.
            cursor.offset += 1
        }
        cursor.skipWhitespace()
        return cursor.offset
    }

    /// The string or key at `index` as text, escapes resolved.
    package func string(at index: Int) -> String {
        let entry = entries[index]
        guard entry.flags & Entry.hasEscapes != 0 else { return String(decoding: text(at: index), as: UTF8.self) }
        var cursor = JSONCursor(bytes, offset: Int(entry.start) - 1, maxDepth: maxDepth)
        // Checked when taped, so reading it again cannot fail.
        return (try? cursor.parseString()) ?? ""
    }

    /// The value at `index` as the parser's tree holds it.
    package func value(at index: Int) -> JSONValue {
        let entry = entries[index]
        switch entry.kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(Int64(bitPattern: entry.bits))
        case .uint: return .uint(entry.bits)
        case .double: return .double(Double(bitPattern: entry.bits))
        case .string, .key: return .string(string(at: index))
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(entry.end))
            var element = index + 1
            while element < Int(entry.start) {
                elements.append(value(at: element))
                element = next(after: element)
            }
            return .array(elements)
        case .object:
            var members = [String: JSONValue](minimumCapacity: Int(entry.end))
            var key = index + 1
            while key < Int(entry.start) {
                // Later members replace earlier ones with an equal key, as in the parser.
                members[string(at: key)] = value(at: key + 1)
                key = next(after: key + 1)
            }
            return .object(members)
        }
    }

    /// Fills the entries during the walk.
    private struct Writer: JSONStructure {
        var entries: UnsafeMutablePointer<Entry>
        var capacity: Int
        var count = 0
        /// The innermost open object: the owner of the next key.
        var object = 0

        init(entries: UnsafeMutablePointer<Entry>, capacity: Int) {
            self.entries = entries
            self.capacity = capacity
        }

        @inline(__always) mutating func append(_ entry: Entry) {
            if count == capacity { grow() }
            entries[count] = entry
            count += 1
        }

        private mutating func grow() {
            let larger = UnsafeMutablePointer<Entry>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: entries, count: count)
            entries.deallocate()
            entries = larger
            capacity *= 2
        }

        mutating func open(isArray: Bool) -> Int {
            let index = count
            // Until it closes, an object's entry keeps the object around it, restored at its close.
            append(Entry(kind: isArray ? .array : .object, flags: 0, tag: 0, start: 0, end: 0, owner: UInt32(object)))
            if !isArray { object = index }
            return index
        }

        mutating func close(_ token: Int, count members: Int) {
            if entries[token].kind == .object {
                object = Int(entries[token].owner)
                entries[token].owner = 0
            }
            entries[token].start = UInt32(count)
            entries[token].end = UInt32(members)
        }

        mutating func key(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool) {
            let flags = (hasEscapes ? Entry.hasEscapes : 0) | (isASCII ? 0 : Entry.isNotASCII)
            append(
                Entry(
                    kind: .key, flags: flags, tag: .max, start: UInt32(range.lowerBound),
                    end: UInt32(range.upperBound), owner: UInt32(object)))
        }

        mutating func string(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool) {
            append(
                Entry(
                    kind: .string, flags: hasEscapes ? Entry.hasEscapes : 0, tag: 0, start: UInt32(range.lowerBound),
                    end: UInt32(range.upperBound), owner: 0))
        }

        mutating func number(_ value: JSONValue) {
            let (kind, bits): (Kind, UInt64) =
                switch value {
                case .int(let int): (.int, UInt64(bitPattern: int))
                case .uint(let uint): (.uint, uint)
                case .double(let double): (.double, double.bitPattern)
                default: (.null, 0)
                }
            append(
                Entry(
                    kind: kind, flags: 0, tag: 0, start: UInt32(truncatingIfNeeded: bits),
                    end: UInt32(truncatingIfNeeded: bits >> 32), owner: 0))
        }

        mutating func literal(_ value: JSONValue) {
            let kind: Kind =
                switch value {
                case .bool(true): .true
                case .bool(false): .false
                default: .null
                }
            append(Entry(kind: kind, flags: 0, tag: 0, start: 0, end: 0, owner: 0))
        }
    }
}
