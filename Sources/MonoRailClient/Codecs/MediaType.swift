/// The media type of a `Content-Type` value, read byte by byte: every response is checked, and
/// Foundation's `trimmingCharacters` and `lowercased` cost more on Linux than the rest of a small
/// record's decoding.
enum MediaType {
    /// The media type before any parameters, without the blanks around it, in ASCII lowercase:
    /// `" Application/JSON ; charset=utf-8"` gives `"application/json"`.
    static func essence(of contentType: String) -> String {
        let bytes = contentType.utf8
        let end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        var type = bytes[bytes.startIndex..<end].drop { isBlank($0) }
        while let last = type.last, isBlank(last) { type = type.dropLast() }
        return String(decoding: type.lazy.map(lowercased), as: UTF8.self)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
