/// A body as the envelope rules read it: a parsed tree, a tape, or bytes read where they lie
/// (``InPlaceValue``).
package protocol EnvelopeValue {
    var isObject: Bool { get }
    var isArray: Bool { get }
    /// For an object, the value of its last member named `key`, as a tree's dictionary keeps it.
    func member(_ key: String) -> Self?
    /// For an object, how many distinct keys it has.
    var memberCount: Int { get }
    /// The value as the parser's tree: for validation errors and for what sits beside the main value.
    var tree: JSONValue { get }
}

extension JSONValue: EnvelopeValue {
    package var isObject: Bool { if case .object = self { true } else { false } }
    package var isArray: Bool { if case .array = self { true } else { false } }
    package func member(_ key: String) -> JSONValue? { if case .object(let object) = self { object[key] } else { nil } }
    package var memberCount: Int { if case .object(let object) = self { object.count } else { 0 } }
    package var tree: JSONValue { self }
}

/// A value on a tape, read by the envelope rules without building the tree of the main value.
package struct JSONTapeValue: EnvelopeValue {
    package let tape: JSONTape
    package let index: Int

    package init(tape: JSONTape, index: Int) {
        self.tape = tape
        self.index = index
    }

    package var isObject: Bool { tape[index].kind == .object }
    package var isArray: Bool { tape[index].kind == .array }

    package func member(_ key: String) -> JSONTapeValue? {
        var found: JSONTapeValue?
        forEachMember { name, value in if name == key { found = value } }
        return found
    }

    package var memberCount: Int {
        var keys = Set<String>()
        forEachMember { name, _ in keys.insert(name) }
        return keys.count
    }

    package var tree: JSONValue { tape.value(at: index) }

    /// Calls `body` with each member's key and value, in text order; nothing for a non-object.
    package func forEachMember(_ body: (String, JSONTapeValue) -> Void) {
        guard isObject else { return }
        let end = Int(tape[index].start)
        var key = index + 1
        while key < end {
            body(tape.string(at: key), JSONTapeValue(tape: tape, index: key + 1))
            key = tape.next(after: key + 1)
        }
    }
}
