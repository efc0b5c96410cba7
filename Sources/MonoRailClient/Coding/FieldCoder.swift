import Foundation

/// Decodes and encodes single values with one set of options, reusing its caches across calls.
///
/// The resources layer decodes thousands of fields per response; building a decoder per field would
/// repeat the key-cache and option set-up each time. One coder serves one response on one task.
package struct FieldCoder {
    let decoding: DecodingContext
    let encoding: EncodingContext
    /// One decoder reused for every top-level value: `unbox` reads the value it is given, so scalars
    /// decode without allocating a decoder each.
    let decoder: ValueDecoderImpl
    /// The tape ``decode(_:fromJSONAt:depth:)`` fills for each value.
    let scratch = JSONTape()

    /// Creates a coder for one batch of work.
    package init(options: CodingOptions) {
        self.decoding = DecodingContext(options: options, userInfo: [:])
        self.encoding = EncodingContext(options: options, userInfo: [:])
        self.decoder = ValueDecoderImpl(value: .null, path: nil, context: decoding)
    }

    /// The options in use.
    package var options: CodingOptions { decoding.options }

    /// Where the last value read in place ended, when the reader checked all of it; 0 when unknown.
    package var valueEnd: Int {
        get { decoding.valueEnd }
        nonmutating set { decoding.valueEnd = newValue }
    }

    /// Decodes a value; a `DecodingError`'s coding path is relative to `value`.
    package func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try decoder.unbox(value, as: type, path: nil)
    }

    /// Decodes the JSON value at the cursor, which ends past it, without building its tree; a
    /// `DecodingError`'s coding path is relative to the value. `depth` is the nesting of the arrays
    /// and objects around the value, counted against the cursor's limit as in a whole text.
    ///
    /// - Throws: ``JSONSyntaxError`` for a value the parser would refuse, `DecodingError` for one
    ///   of the wrong shape.
    package func decode<T: Decodable>(_ type: T.Type, fromJSONAt cursor: inout JSONCursor, depth: Int) throws -> T {
        // One tape serves every value of the batch; a value decoded while another is (none is, as
        // merges read fields) gets one of its own.
        let tape = scratch.isOpen ? JSONTape() : scratch
        guard try tape.fill(valueAt: &cursor, depth: depth) else {
            return try decode(type, from: try JSONParser.value(at: &cursor, depth: depth))
        }
        defer { tape.close() }
        return try JSONTapeDecoder.decode(type, from: tape, at: 0, prefix: nil, context: decoding)
    }

    /// The files met by ``encode(_:)`` so far, standing as placeholders in the trees it returned.
    package var attachments: FileAttachments { encoding.attachments }

    /// Encodes a value into a tree.
    package func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        try encoding.box(value, path: nil)
    }

    /// Turns a `DecodingError` into a failure whose path starts at `prefix` (`$.trains[3].speed`).
    package static func failure(
        typeName: String, field: String, key: String, prefix: String, error: any Error
    ) -> DecodingFailure {
        if let error = error as? DecodingError {
            var failure = DecodingFailure(typeName: typeName, error: error)
            let relative = failure.path.dropFirst()  // "$" starts every path
            failure.path = prefix + "." + key + relative
            failure.key = key
            failure.field = field
            return failure
        }
        return DecodingFailure(
            typeName: typeName, key: key, path: prefix + "." + key, reason: String(describing: error), field: field)
    }
}
