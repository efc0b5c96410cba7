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
        // Most servers send it in lowercase already: a copy of those bytes is a copy of valid UTF-8,
        // where a mapped sequence would be checked and repaired byte by byte.
        guard type.contains(where: isUppercase) else { return String(Substring(type)) }
        return String(decoding: type.map { isUppercase($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func isUppercase(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
