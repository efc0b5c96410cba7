import MonoRailTransport

/// Field coders kept for reuse, one set of options each: making a coder allocates seven objects —
/// more than decoding a small record in place — and a model's merges all use the same options.
///
/// A coder is taken for one batch of work on one task and given back after; a coder given back
/// with files it met while encoding is not kept, as those belong to its batch.
package struct FieldCoderPool: Sendable {
    /// A coder no one is using.
    private struct Idle: @unchecked Sendable {
        // @unchecked: a coder's caches and scratch space are not thread-safe, but a coder in the
        // pool is used by no one, and one taken out of it (under the lock) by its taker alone.
        let coder: FieldCoder
    }

    private let options: CodingOptions
    private let idle = Locked<[Idle]>([])
    /// The most coders kept: as many as merges of the model run at once, in the common case.
    private let capacity: Int

    package init(options: CodingOptions, capacity: Int = 8) {
        self.options = options
        self.capacity = capacity
    }

    /// Runs `body` with a coder of the pool's options, taken from the pool or made.
    package func withCoder<Result>(_ body: (FieldCoder) throws -> Result) rethrows -> Result {
        let coder = idle.withLock { $0.popLast()?.coder } ?? FieldCoder(options: options)
        defer {
            if coder.attachments.isEmpty {
                idle.withLock { idle in
                    if idle.count < capacity { idle.append(Idle(coder: coder)) }
                }
            }
        }
        return try body(coder)
    }
}
