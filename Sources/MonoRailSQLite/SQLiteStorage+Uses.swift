import MonoRail

extension SQLiteStorage {
    /// The uses of records and queries since the last write, written with the next one (the least
    /// recently used go first past ``SQLiteStorage/maxBytes``): a read costs no write.
    ///
    /// A read notes its keys as they are, one batch each, so a cold start reading thousands of
    /// records hashes none of them; the batches are folded by key when they pile up and when the
    /// next write takes them.
    struct Uses {
        var clock: Int64
        private var batches: [(keys: [RecordKey], use: Int64)] = []
        private var batched = 0
        private var records: [RecordKey: Int64] = [:]
        private var queries: [QueryKey: Int64] = [:]

        /// Keys noted beyond which batches are folded: a bound on the memory of reads between writes.
        private static let foldAbove = 100_000

        init(clock: Int64) { self.clock = clock }

        mutating func tick() -> Int64 {
            clock += 1
            return clock
        }

        /// Notes a read of records.
        mutating func note(_ keys: [RecordKey]) {
            guard !keys.isEmpty else { return }
            batches.append((keys, tick()))
            batched += keys.count
            if batched > Self.foldAbove { fold() }
        }

        /// Notes a read of a stored query.
        mutating func note(_ query: QueryKey) {
            queries[query] = tick()
        }

        /// The last use of each record and query noted, which are then forgotten.
        mutating func take() -> (records: [RecordKey: Int64], queries: [QueryKey: Int64]) {
            fold()
            defer { reset() }
            return (records, queries)
        }

        /// Forgets the uses noted.
        mutating func reset() {
            self = Uses(clock: clock)
        }

        private mutating func fold() {
            // Batches are in the order of their uses: a later batch's use wins.
            for (keys, use) in batches {
                for key in keys { records[key] = use }
            }
            batches.removeAll()
            batched = 0
        }
    }
}
