/// A 64-bit digest of a record's bytes as received. Equal bytes give equal digests, so a record
/// whose digest is the one its instance was last merged from decodes to the values the instance
/// already holds from the server, and a re-read list need not decode it again.
///
/// Keyed by a seed drawn once per process and never stored. Two different records share a digest
/// with a chance of about 2^-64 per comparison. It is not a defence against a server choosing
/// colliding bytes, and needs not be: such a server could as well send the old record outright.
package enum RecordDigest {
    private static let seeds: (UInt64, UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next() | 1, generator.next() | 1)
    }()

    /// The digest of `bytes`: sixteen bytes at a time folded by a full-width multiply (as wyhash does).
    package static func of(_ bytes: UnsafeRawBufferPointer) -> Int {
        let (seed, first, second) = seeds
        var state = seed ^ UInt64(bytes.count)
        var offset = 0
        while offset + 16 <= bytes.count {
            let low = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let high = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            state = fold(low ^ first ^ state, high ^ second)
            offset += 16
        }
        var tail: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &tail) { copy in
            copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
        state = fold(tail.0 ^ first ^ state, tail.1 ^ second)
        return Int(truncatingIfNeeded: fold(state ^ second, UInt64(bytes.count) ^ first))
    }

    @inline(__always) private static func fold(_ lhs: UInt64, _ rhs: UInt64) -> UInt64 {
        let product = lhs.multipliedFullWidth(by: rhs)
        return product.high ^ product.low
    }
}
