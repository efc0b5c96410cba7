/// What a walk over a JSON value (``JSONCursor/walkValue(depth:into:)``) reports, in text order.
/// Ranges are byte offsets; a string's range excludes its quotes.
package protocol JSONStructure {
    /// An array or object starts; the token returned is handed back when it closes.
    mutating func open(isArray: Bool) -> Int
    /// The container `open` returned `token` for closes with `count` elements or members.
    mutating func close(_ token: Int, count: Int)
    /// A member's key; `isASCII` when its text, escapes read, is all ASCII.
    mutating func key(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool)
    /// A string value.
    mutating func string(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool)
    /// A number, as the parser reads it.
    mutating func number(_ value: JSONValue)
    /// `true`, `false` or `null`.
    mutating func literal(_ value: JSONValue)
}

/// The structure of a value only checked: nothing is recorded.
struct UnrecordedStructure: JSONStructure {
    // A byte of storage: an empty value passed `inout` may have no address at all, and the thread
    // sanitizer's instrumentation of the access then writes shadow memory for a bogus one (it
    // crashed so).
    private var unused: UInt8 = 0

    @inline(__always) func open(isArray: Bool) -> Int { 0 }
    @inline(__always) func close(_ token: Int, count: Int) {}
    @inline(__always) func key(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool) {}
    @inline(__always) func string(_ range: Range<Int>, hasEscapes: Bool, isASCII: Bool) {}
    @inline(__always) func number(_ value: JSONValue) {}
    @inline(__always) func literal(_ value: JSONValue) {}
}
