import Foundation

/// Decodes `Decodable` values from a ``JSONTape``: ``ValueDecoder``'s rules without the tree.
///
/// Strings, numbers, Booleans, dates and arrays of strings whose JSON type is the one asked for are
/// read from the tape directly. Anything else — a coercion, a mismatch, `URL`, `Decimal`, `Data` —
/// is handed, as the one value's tree, to ``ValueDecoder``'s own code, so values and errors are the
/// tree decoder's. One decoder serves a whole call: descending into a value moves ``value`` and
/// pushes onto ``path``, and coming back restores both.
final class JSONTapeDecoder: Decoder {
    let tape: JSONTape
    let context: DecodingContext
    /// Where the taped value sits in the payload, for error paths.
    let prefix: PathNode?
    // A decoder belongs to one decode call on one thread, and no access to these overlaps another:
    // the runtime's exclusivity checks, which cost as much as the reads, are left out.
    /// The index of the value being decoded.
    @exclusivity(unchecked) var value: Int
    /// The way down from the taped value: a key's entry index, or the complement of an element's index.
    @exclusivity(unchecked) var path: [Int] = []

    /// The tape's ``JSONTape/generation`` when this decoder was made: a later one means the text
    /// this decoder was made for is gone.
    let generation: Int

    init(tape: JSONTape, value: Int, prefix: PathNode?, context: DecodingContext) {
        self.tape = tape
        self.generation = tape.generation
        self.value = value
        self.prefix = prefix
        self.context = context
    }

    /// Decodes the value at entry `index` of `tape`, which sits at `prefix` in the payload.
    static func decode<T: Decodable>(
        _ type: T.Type, from tape: JSONTape, at index: Int, prefix: PathNode?, context: DecodingContext
    ) throws -> T {
        try JSONTapeDecoder(tape: tape, value: index, prefix: prefix, context: context)
            .decode(type, at: index, depth: 0, step: noStep)
    }

    var codingPath: [any CodingKey] { PathNode.keys(of: pathNode(depth: path.count, step: Self.noStep)) }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try checkOpen()
        try expect(.object, [String: JSONValue].self)
        return KeyedDecodingContainer(
            JSONTapeKeyedContainer<Key>(
                decoder: self, object: value, table: context.table(for: type), depth: path.count))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try checkOpen()
        try expect(.array, [JSONValue].self)
        return JSONTapeUnkeyedContainer(decoder: self, array: value, depth: path.count)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        try checkOpen()
        return self
    }

    // MARK: - State

    func checkOpen() throws {
        guard tape.isOpen, tape.generation == generation else { throw Self.usedAfterReturn }
    }

    static var usedAfterReturn: DecodingError {
        .dataCorrupted(
            .init(codingPath: [], debugDescription: "a decoder was used after the decode call that made it returned"))
    }

    private func expect(_ kind: JSONTape.Kind, _ type: Any.Type) throws {
        guard tape[value].kind == kind else {
            throw fallback(at: value, depth: path.count, step: Self.noStep) { $0.mismatch(type, $0.value, $0.path) }
        }
    }

    /// A decoder of its own standing at the value at `index`, `step` down from a container made at
    /// `depth`: for containers and decoders handed out that may outlive the current call.
    func child(at index: Int, depth: Int, step: Int) -> JSONTapeDecoder {
        JSONTapeDecoder(tape: tape, value: index, prefix: pathNode(depth: depth, step: step), context: context)
    }

    /// ``path``'s steps that mean nothing: a single value is decoded where the decoder stands.
    static let noStep = Int.min

    /// The path of the first `depth` steps of ``path`` and then `step`, as a linked list.
    func pathNode(depth: Int, step: Int) -> PathNode? {
        var node = prefix
        for step in path.prefix(depth) { node = PathNode(parent: node, key: wireKey(step)) }
        if step != Self.noStep { node = PathNode(parent: node, key: wireKey(step)) }
        return node
    }

    private func wireKey(_ step: Int) -> WireKey {
        step >= 0 ? WireKey(stringValue: tape.string(at: step)) : WireKey(intValue: ~step)
    }

    /// Runs `body` with the decoder at the value at `index`, which is `step` down from a container
    /// made at `depth`; restores the decoder after.
    @inline(__always) func descend<T>(
        to index: Int, depth: Int, step: Int, _ body: () throws -> T
    ) rethrows -> T {
        let savedValue = value
        value = index
        defer { value = savedValue }
        // A container is used while the decoder stands where it was made, so the path only grows
        // by the step; one kept past that (allowed, if odd) has the path set to its own.
        if path.count == depth {
            if step == Self.noStep { return try body() }
            path.append(step)
            defer { path.removeLast() }
            return try body()
        }
        let savedPath = path
        path.removeSubrange(min(depth, path.count)...)
        if step != Self.noStep { path.append(step) }
        defer { path = savedPath }
        return try body()
    }

    /// `body` run on the tree decoder holding the value at `index` and its path.
    func fallback<T>(at index: Int, depth: Int, step: Int, _ body: (ValueDecoderImpl) throws -> T) rethrows -> T {
        try body(
            ValueDecoderImpl(value: tape.value(at: index), path: pathNode(depth: depth, step: step), context: context))
    }

    // MARK: - Values

    /// The string at `index`; `depth` and `step` locate it for errors, as in ``descend(to:depth:step:_:)``.
    func string(at index: Int, depth: Int, step: Int) throws -> String {
        if tape[index].kind == .string { return tape.string(at: index) }
        return try fallback(at: index, depth: depth, step: step) { try $0.unboxString($0.value, $0.path) }
    }

    func integer<I: FixedWidthInteger>(_ type: I.Type, at index: Int, depth: Int, step: Int) throws -> I {
        let entry = tape[index]
        if entry.kind == .int, let exact = I(exactly: Int64(bitPattern: entry.bits)) { return exact }
        if entry.kind == .uint, let exact = I(exactly: entry.bits) { return exact }
        return try fallback(at: index, depth: depth, step: step) { try $0.unboxInteger($0.value, as: type, $0.path) }
    }

    func double(at index: Int, depth: Int, step: Int) throws -> Double {
        let entry = tape[index]
        switch entry.kind {
        case .double: return Double(bitPattern: entry.bits)
        case .int: return Double(Int64(bitPattern: entry.bits))
        case .uint: return Double(entry.bits)
        default: return try fallback(at: index, depth: depth, step: step) { try $0.unboxDouble($0.value, $0.path) }
        }
    }

    func float(at index: Int, depth: Int, step: Int) throws -> Float {
        try fallback(at: index, depth: depth, step: step) { try $0.unboxFloat($0.value, $0.path) }
    }

    func bool(at index: Int, depth: Int, step: Int) throws -> Bool {
        switch tape[index].kind {
        case .true: return true
        case .false: return false
        default: return try fallback(at: index, depth: depth, step: step) { try $0.unboxBool($0.value, $0.path) }
        }
    }

    func date(at index: Int, depth: Int, step: Int) throws -> Date {
        let entry = tape[index]
        if entry.kind == .string, entry.flags & JSONTape.Entry.hasEscapes == 0,
            let date = context.options.dateFormats.date(fromUTF8: tape.text(at: index))
        {
            return date
        }
        return try fallback(at: index, depth: depth, step: step) { try $0.unboxDate($0.value, $0.path) }
    }

    /// Any `Decodable` value: the types with a wire form of their own as ``ValueDecoderImpl/unbox(_:as:path:)``
    /// reads them, the rest through their `init(from:)` on this decoder.
    func decode<T: Decodable>(_ type: T.Type, at index: Int, depth: Int, step: Int) throws -> T {
        if type == String.self { return unsafeBitCast(try string(at: index, depth: depth, step: step), to: T.self) }
        if type == Int.self {
            return unsafeBitCast(try integer(Int.self, at: index, depth: depth, step: step), to: T.self)
        }
        if type == Double.self { return unsafeBitCast(try double(at: index, depth: depth, step: step), to: T.self) }
        if type == Bool.self { return unsafeBitCast(try bool(at: index, depth: depth, step: step), to: T.self) }
        if type == Date.self { return unsafeBitCast(try date(at: index, depth: depth, step: step), to: T.self) }
        if type == [String].self, let strings = strings(at: index) { return unsafeBitCast(strings, to: T.self) }
        if type == JSONValue.self || type == URL.self || type == Decimal.self || type == Data.self {
            return try fallback(at: index, depth: depth, step: step) { try $0.unbox($0.value, as: type, path: $0.path) }
        }
        return try descend(to: index, depth: depth, step: step) { try T(from: self) }
    }

    /// The array at `index` when every element is a string.
    private func strings(at index: Int) -> [String]? {
        let entry = tape[index]
        guard entry.kind == .array else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(Int(entry.end))
        var element = index + 1
        while element < Int(entry.start) {
            guard tape[element].kind == .string else { return nil }
            strings.append(tape.string(at: element))
            element += 1
        }
        return strings
    }
}

// MARK: - Single value

extension JSONTapeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { (try? checkOpen()) != nil && tape[value].kind == .null }
    func decode(_ type: Bool.Type) throws -> Bool {
        try checked { try bool(at: value, depth: path.count, step: Self.noStep) }
    }
    func decode(_ type: String.Type) throws -> String {
        try checked { try string(at: value, depth: path.count, step: Self.noStep) }
    }
    func decode(_ type: Double.Type) throws -> Double {
        try checked { try double(at: value, depth: path.count, step: Self.noStep) }
    }
    func decode(_ type: Float.Type) throws -> Float {
        try checked { try float(at: value, depth: path.count, step: Self.noStep) }
    }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try checked { try decode(type, at: value, depth: path.count, step: Self.noStep) }
    }

    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        try checked { try integer(type, at: value, depth: path.count, step: Self.noStep) }
    }

    @inline(__always) private func checked<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        return try body()
    }
}
