import MonoRailTransport

/// How Swift property names map to the keys on the wire.
///
/// The mapping always runs from the Swift name to the wire key, never the other way round, so it is
/// idempotent on keys that are already snake_case: a `CodingKeys` enum with explicit raw values such
/// as `"number_of_cars"` works unchanged under ``snakeCase``. This is also why MonoRail does not use
/// `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`, which measured 1.6–1.8× slower on Linux.
public struct KeyMapping: Sendable {
    private let transform: (@Sendable (String) -> String)?

    private init(_ transform: (@Sendable (String) -> String)?) {
        self.transform = transform
    }

    /// Keys are used as they are.
    public static let identity = KeyMapping(nil)

    /// `numberOfCars` ↔ `number_of_cars`, `userID` ↔ `user_id`, `URLString` ↔ `url_string`.
    public static let snakeCase = KeyMapping { KeyMapping.snakeCased($0) }

    /// A mapping of your own from Swift names to wire keys.
    ///
    /// - Parameter transform: Called once per distinct key per decode; results are cached.
    public static func custom(_ transform: @escaping @Sendable (String) -> String) -> KeyMapping {
        KeyMapping(transform)
    }

    /// The wire key for a Swift name.
    public func wireKey(for name: String) -> String {
        transform?(name) ?? name
    }

    var isIdentity: Bool { transform == nil }

    /// Converts camelCase to snake_case, keeping acronyms together.
    public static func snakeCased(_ name: String) -> String {
        // Fast path: keys that are already lower-case ASCII (explicit snake_case coding keys, most
        // one-word properties) are returned as they are, without allocating.
        var hasUpper = false
        var isASCII = true
        for byte in name.utf8 {
            if byte >= 0x80 {
                isASCII = false
                break
            }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUpper = true }
        }
        if isASCII && !hasUpper { return name }
        let scalars = Array(name.unicodeScalars)
        guard scalars.contains(where: { $0.properties.isUppercase }) else { return name }
        var result = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            if scalar.properties.isUppercase {
                let previous = index > 0 ? scalars[index - 1] : nil
                let next = index + 1 < scalars.count ? scalars[index + 1] : nil
                let afterLower = previous.map { $0.properties.isLowercase || ("0"..."9").contains($0) } ?? false
                let endsAcronym =
                    (previous?.properties.isUppercase ?? false) && (next?.properties.isLowercase ?? false)
                if index > 0, previous != "_", afterLower || endsAcronym {
                    result.append("_")
                }
                result.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }
}

/// A per-call cache of wire keys: one decode or encode sees the same handful of keys thousands of
/// times, so each is mapped once. Not shared between calls, so it needs no lock. Kept as parallel
/// arrays searched linearly: for the dozen or so keys of a typical payload, comparing small strings
/// is cheaper than hashing them, and a new cache costs no dictionary growth.
final class WireKeyCache {
    private let mapping: KeyMapping
    private var names: [String] = []
    private var wires: [String] = []
    private var overflow: [String: String] = [:]
    private var keyTypes: [(ObjectIdentifier, Bool)] = []

    init(_ mapping: KeyMapping) {
        self.mapping = mapping
    }

    /// Whether `Key` is the key type of a `[String: Value]` dictionary, whose keys are data, not
    /// property names, and so are never mapped.
    func isDictionaryKey<Key: CodingKey>(_ type: Key.Type) -> Bool {
        let id = ObjectIdentifier(type)
        for (known, answer) in keyTypes where known == id { return answer }
        let answer = DictionaryKeyTypes.shared.isDictionaryKey(type)
        keyTypes.append((id, answer))
        return answer
    }

    @inline(__always) func wireKey(for name: String) -> String {
        if mapping.isIdentity { return name }
        for index in names.indices where names[index] == name { return wires[index] }
        if let cached = overflow[name] { return cached }
        let key = mapping.wireKey(for: name)
        if names.count < 32 {
            names.append(name)
            wires.append(key)
        } else {
            overflow[name] = key
        }
        return key
    }
}

/// Remembers which key types belong to dictionaries: finding out takes the type's name, which costs
/// microseconds, so it is done once per type per process.
final class DictionaryKeyTypes: Sendable {
    static let shared = DictionaryKeyTypes()
    private let known = Locked<[ObjectIdentifier: Bool]>([:])

    func isDictionaryKey<Key: CodingKey>(_ type: Key.Type) -> Bool {
        let id = ObjectIdentifier(type)
        if let answer = known.withLock({ $0[id] }) { return answer }
        let answer = String(describing: type) == "_DictionaryCodingKey"
        known.withLock { $0[id] = answer }
        return answer
    }
}
