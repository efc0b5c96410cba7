/// Settings shared by MonoRail's decoder and encoder.
public struct CodingOptions: Sendable {
    /// How to treat values whose type differs from the declared one.
    public enum Coercion: Sendable, Hashable {
        /// Types must match exactly, as with `JSONDecoder`.
        case strict
        /// Numbers in strings (`"5"` → 5), Booleans as `"true"`/`"false"`/`1`/`0`, and numbers or
        /// Booleans where a string is declared are converted.
        case lenient
    }

    /// How Swift names map to wire keys. Default: ``KeyMapping/snakeCase``.
    public var keyMapping: KeyMapping
    /// Date formats tried in order when decoding. Default: ``DateFormat/defaults``.
    public var dateFormats: [DateFormat]
    /// The format dates are encoded in. Default: ``DateFormat/iso8601WithFractionalSeconds``.
    public var dateEncodingFormat: DateFormat
    /// Default: ``Coercion/strict``.
    public var coercion: Coercion

    /// Creates options.
    public init(
        keyMapping: KeyMapping = .snakeCase,
        dateFormats: [DateFormat] = DateFormat.defaults,
        dateEncodingFormat: DateFormat = .iso8601WithFractionalSeconds,
        coercion: Coercion = .strict
    ) {
        self.keyMapping = keyMapping
        self.dateFormats = dateFormats
        self.dateEncodingFormat = dateEncodingFormat
        self.coercion = coercion
    }
}
