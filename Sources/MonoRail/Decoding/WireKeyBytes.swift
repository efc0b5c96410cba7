/// The wire keys of a model's fields as UTF-8, one after another in one buffer: a key compared
/// against them retains nothing (an array per key was retained and released at each comparison,
/// for every member of every record) and needs no call to `memcmp` for a dozen bytes.
struct WireKeyBytes: Sendable {
    private let bytes: [UInt8]
    /// Where each key starts in ``bytes``, and where the last one ends.
    private let bounds: [Int]

    init(_ keys: [String]) {
        var bytes: [UInt8] = []
        var bounds = [0]
        for key in keys {
            bytes += key.utf8
            bounds.append(bytes.count)
        }
        self.bytes = bytes
        self.bounds = bounds
    }

    var count: Int { bounds.count - 1 }

    /// Whether `key` is the key at `index`.
    @inline(__always) func matches(_ key: UnsafeRawBufferPointer, at index: Int) -> Bool {
        let start = bounds[index]
        guard key.count == bounds[index + 1] - start else { return false }
        return bytes.withUnsafeBufferPointer { bytes in
            for offset in 0..<key.count where key[offset] != bytes[start + offset] { return false }
            return true
        }
    }
}
