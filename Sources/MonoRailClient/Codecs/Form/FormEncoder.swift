public import Foundation

/// Writes `application/x-www-form-urlencoded` bodies with Rails bracket nesting, as Rails and
/// ApiModel's `FormDataEncoding` expect.
///
/// ```swift
/// FormEncoder.encode(["train": ["company": "DB & Co", "tags": ["a", "b"]]])
/// // "train%5Bcompany%5D=DB+%26+Co&train%5Btags%5D%5B%5D=a&train%5Btags%5D%5B%5D=b"
/// ```
///
/// Names and nesting are those of ``QueryEncoder``; the bytes follow the WHATWG URL standard's form
/// serializer: alphanumerics and `*-._` stay, a space becomes `+`, everything else is `%XX` of its
/// UTF-8 bytes. Empty arrays and objects have no form representation and are left out, as
/// browsers and Rails leave them; `null` is an empty value.
public enum FormEncoder {
    /// Encodes a tree; a bare value that is not an object has no name and gives an empty body.
    public static func encode(_ value: JSONValue) -> String {
        guard case .object(let object) = value else { return "" }
        return QueryEncoder.pairs(object).map { "\(escape($0))=\(escape($1))" }.joined(separator: "&")
    }

    /// The body as bytes.
    public static func data(_ value: JSONValue) -> Data { Data(encode(value).utf8) }

    /// Form-escapes one name or value.
    public static func escape(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"):
                bytes.append(byte)
            case UInt8(ascii: " "): bytes.append(UInt8(ascii: "+"))
            default: bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
