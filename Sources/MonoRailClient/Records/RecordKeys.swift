/// The keys of one model's records: each field's wire key in schema order, and the id's. A class:
/// every record read in place holds them, and a struct of five buffers cost five retains a record.
///
/// Kept as UTF-8, one after another in one buffer: a key compared against them retains nothing (an
/// array per key was retained and released at each comparison, for every member of every record)
/// and needs no call to `memcmp` for a dozen bytes.
package final class RecordKeys: Sendable {
    /// The fields' wire keys, in schema order.
    package let fields: [String]
    /// The key that holds the id.
    package let id: String
    private let bytes: [UInt8]
    /// Where each field's key starts in ``bytes``, and where the last one ends.
    private let bounds: [Int]
    private let idBytes: [UInt8]
    /// The key of the record's version (``isVersion(_:)``) when no field has it; empty for none.
    private let versionBytes: [UInt8]
    /// The field whose key is the version key, when one is.
    package let versionField: Int?

    /// - Parameter version: The key whose value orders a record's states (`updated_at`): read as
    ///   ``RecordMember/version`` when no field has that key.
    package init(fields: [String], id: String, version: String? = nil) {
        var bytes: [UInt8] = []
        var bounds = [0]
        for key in fields {
            bytes += key.utf8
            bounds.append(bytes.count)
        }
        self.fields = fields
        self.id = id
        self.bytes = bytes
        self.bounds = bounds
        self.idBytes = Array(id.utf8)
        let versionField = version.flatMap { fields.firstIndex(of: $0) }
        self.versionField = versionField
        self.versionBytes = versionField == nil && version != id ? Array((version ?? "").utf8) : []
    }

    /// The key of the record's version when no field has it.
    package var version: String? { versionBytes.isEmpty ? nil : String(decoding: versionBytes, as: UTF8.self) }

    var count: Int { bounds.count - 1 }

    /// The field whose key is `key`; the `expected` one is tried first, since records usually list
    /// their keys in schema order.
    @inline(__always) func field(_ key: UnsafeRawBufferPointer, expected: Int) -> Int? {
        if expected < count, matches(key, at: expected) { return expected }
        for index in 0..<count where index != expected && matches(key, at: index) { return index }
        return nil
    }

    /// Whether `key` is the id's key.
    @inline(__always) func isID(_ key: UnsafeRawBufferPointer) -> Bool { key.elementsEqual(idBytes) }

    /// What a key no field has is: the id, the version, or unknown.
    @inline(__always) func member(_ key: UnsafeRawBufferPointer) -> RecordMember {
        if key.elementsEqual(idBytes) { return .id }
        if !versionBytes.isEmpty, key.elementsEqual(versionBytes) { return .version }
        return .unknown
    }

    /// Whether the bytes at `offset` are the id's key between quotes, as JSON text spells it.
    func isQuotedID(in text: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        let end = offset + 1 + idBytes.count
        guard end < text.count, text[offset] == UInt8(ascii: "\""), text[end] == UInt8(ascii: "\"") else {
            return false
        }
        return text[(offset + 1)...].starts(with: idBytes)
    }

    /// Whether `key` is the key at `index`.
    @inline(__always) private func matches(_ key: UnsafeRawBufferPointer, at index: Int) -> Bool {
        let start = bounds[index]
        guard key.count == bounds[index + 1] - start else { return false }
        return bytes.withUnsafeBufferPointer { bytes in
            for offset in 0..<key.count where key[offset] != bytes[start + offset] { return false }
            return true
        }
    }
}
