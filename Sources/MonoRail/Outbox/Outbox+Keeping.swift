import Foundation

// Keeping: a write applied locally and kept durably before the action returns.
extension Outbox {
    /// Whether a write of this record is kept behind others now: any write waiting to be sent, or
    /// a parked one of the record, which the write joins. A queued-when-offline write goes behind
    /// them, to keep the order.
    func isHoldingWrites(model: String, id: ResourceID?) -> Bool {
        let key = WrittenRecord(model: model, id: id)
        return state.withLock { state in
            state.entries.contains { !$0.isParked || WrittenRecord($0.write) == key }
        }
    }

    /// Keeps a write: in memory at once (so its order is fixed), in storage before it returns.
    ///
    /// - Parameter apply: The optimistic change, made once the storage holds the write.
    /// - Returns: How the write will end: settled when the server takes or refuses it, or the
    ///   outbox parks or drops it.
    /// - Throws: The storage's error; nothing is kept then.
    /// - Parameter unanswered: Whether the write was sent once already, directly, and no answer came.
    func keep(
        _ make: (Int64) -> PendingWrite, instance: any ResourceModel, sent: [UInt64], unanswered: Bool = false,
        apply: () -> Void
    ) async throws -> WriteFate {
        // The caller opened the outbox: it asked whether writes are held first.
        let keptAt = FetchStamp.next(date: Date())
        let fate = WriteFate()
        let (write, storage, requeued) = state.withLock {
            state -> (PendingWrite, (any OutboxStorage)?, Requeued?) in
            let write = make(state.nextSequence)
            if let requeued = Self.requeue(write, sent: sent, in: &state.entries) {
                // The write goes as the parked one it joined: its end is that one's from now.
                state.fates[requeued.write.sequence] = fate
                return (requeued.write, state.storage, requeued)
            }
            state.nextSequence += 1
            var entry = Entry(write: write, instance: instance, sent: sent, isKept: false)
            entry.keptAt = keptAt.order
            entry.mayHaveApplied = unanswered
            state.entries.append(entry)
            state.fates[write.sequence] = fate
            return (write, state.storage, nil)
        }
        if let requeued {
            do {
                try await keepRequeued(requeued, in: storage ?? InMemoryOutboxStorage(), apply: apply)
            } catch {
                _ = state.withLock { $0.fates.removeValue(forKey: requeued.write.sequence) }
                throw error
            }
            return fate
        }
        do {
            try await (storage ?? InMemoryOutboxStorage()).enqueue(write)
        } catch {
            state.withLock { state in
                state.entries.removeAll { $0.write.sequence == write.sequence }
                state.fates[write.sequence] = nil
            }
            entriesChanged()
            throw error
        }
        apply()
        let rewritten = state.withLock { state -> PendingWrite? in
            guard let index = state.entries.lastIndex(where: { $0.write.sequence == write.sequence }) else {
                return nil
            }
            state.entries[index].isKept = true
            // A create confirmed while this was kept replaced a local id in it, which storage missed.
            return state.entries[index].write == write ? nil : state.entries[index].write
        }
        if let rewritten {
            do {
                try await (storage ?? InMemoryOutboxStorage()).settle(removing: [], updating: [rewritten])
            } catch {
                state.withLock { _ = $0.unsettled.rewritten.insert(rewritten.sequence) }
            }
        }
        tell(.queued(write))
        // While the server is known unreachable, the write waits for the retry instead of trying alone.
        if state.withLock(\.sendsNewWritesNow) { startAutomaticRun() }
        return fate
    }

    /// A write that took the place of its record's parked writes: kept in storage as the outbox now
    /// has it, or the outbox put back as storage has it.
    private func keepRequeued(_ requeued: Requeued, in storage: any OutboxStorage, apply: () -> Void) async throws {
        // The parked writes of the record are sent again, with the new values, in their place.
        do {
            try await storage.settle(removing: requeued.removed, updating: requeued.updated)
        } catch {
            // Not kept as the new write: the outbox stays as storage has it.
            state.withLock { state in
                for entry in requeued.previous {
                    if let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) {
                        state.entries[index] = entry
                    } else {
                        let index = state.entries.firstIndex { $0.write.sequence > entry.write.sequence }
                        state.entries.insert(entry, at: index ?? state.entries.endIndex)
                    }
                }
            }
            throw error
        }
        apply()
        for entry in requeued.resumed { tell(.queued(entry.write)) }
        if state.withLock(\.sendsNewWritesNow) { startAutomaticRun() }
    }

    /// What a new write of a record with parked writes did to the outbox.
    private struct Requeued {
        /// The record's first parked write, now with the new values and key, waiting to be sent.
        var write: PendingWrite
        /// The record's other parked writes, which the new one replaces.
        var removed: [Int64]
        /// Writes rewritten in storage: the requeued one and the writes parked with it.
        var updated: [PendingWrite]
        /// Entries sent again.
        var resumed: [Entry]
        /// The entries it changed or removed, as they were.
        var previous: [Entry]
    }

    /// Puts a new write of a record into the record's first parked write, which is sent again in
    /// its place (before the writes that depend on it) with the new body laid over its own and the
    /// new idempotency key; the record's later parked writes and the writes parked with them
    /// resume. `nil` when the record has none parked, or the new write is a delete, which goes
    /// behind them as any write.
    private static func requeue(_ write: PendingWrite, sent: [UInt64], in entries: inout [Entry]) -> Requeued? {
        let key = WrittenRecord(write)
        guard write.verb != .destroy,
            let first = entries.firstIndex(where: {
                $0.isParked && !$0.write.isUnreadable && WrittenRecord($0.write) == key
            })
        else { return nil }
        let before = entries
        var merged = entries[first].write
        let laterOfRecord = entries.indices.filter { $0 > first && WrittenRecord(entries[$0].write) == key }
        if merged.verb == .create {
            // A create's body has every field; the save's, the unsaved ones, laid over it.
            merged.body = merged.body.overlaid(with: write.body)
            merged.fields.append(contentsOf: write.fields.filter { !merged.fields.contains($0) })
        } else {
            // Parked, their fields became unsaved edits again: the new save sends each as it is now,
            // and no field the server changed meanwhile with a value from then.
            (merged.body, merged.fields) = (write.body, write.fields)
        }
        merged.idempotencyKey = write.idempotencyKey
        // The new save sends it: its replay follows from that save.
        merged.traceContext = write.traceContext ?? merged.traceContext
        if write.ifMatch != nil || write.waitsForIfMatch {
            (merged.ifMatch, merged.waitsForIfMatch) = (write.ifMatch, write.waitsForIfMatch)
        }
        merged.attempts = 0
        merged.failures = 0
        merged.parking = nil
        // A graph the server refused goes again as new writes, each under its own key.
        merged.batch = nil
        var sentEdits = entries[first].sent
        for (offset, edit) in sent.enumerated() {
            if offset < sentEdits.count {
                sentEdits[offset] = max(sentEdits[offset], edit)
            } else {
                sentEdits.append(edit)
            }
        }
        entries[first].write = merged
        entries[first].sent = sentEdits
        entries[first].notBefore = nil
        // Sent under a new key: no earlier attempt's answer can come back for it.
        entries[first].mayHaveApplied = false
        var updated = [merged]
        var resumed = [entries[first]]
        for index in dependents(of: first, in: entries)
        where entries[index].write.parking?.code == .dependencyRejected
            && WrittenRecord(entries[index].write) != key
        {
            entries[index].write.parking = nil
            entries[index].write.batch = nil
            updated.append(entries[index].write)
            resumed.append(entries[index])
        }
        let removed = laterOfRecord.map { entries[$0].write.sequence }
        entries.removeAll { removed.contains($0.write.sequence) }
        let touched = Set(removed + updated.map(\.sequence))
        return Requeued(
            write: merged, removed: removed, updated: updated, resumed: resumed,
            previous: before.filter { touched.contains($0.write.sequence) })
    }

    /// The later writes that depend on the write at `index`, in order: writes of the same record,
    /// writes naming a record it creates, and so on along the chain.
    static func dependents(of index: Int, in entries: [Entry]) -> [Int] {
        var records: Set<WrittenRecord> = [WrittenRecord(entries[index].write)]
        var locals: Set<String> = entries[index].write.chainedID.map { [$0] } ?? []
        var found: [Int] = []
        for later in entries.indices where later > index {
            let write = entries[later].write
            guard records.contains(WrittenRecord(write)) || !write.namedIDs(where: locals.contains).isEmpty else {
                continue
            }
            found.append(later)
            records.insert(WrittenRecord(write))
            if let chained = write.chainedID { locals.insert(chained) }
        }
        return found
    }

    /// Whether a write of this record is kept.
    func holdsWrite(model: String, id: ResourceID?) -> Bool {
        let key = WrittenRecord(model: model, id: id)
        return state.withLock { state in state.entries.contains { !$0.isParked && WrittenRecord($0.write) == key } }
    }

    /// The replaced local ids, to rewrite a body about to be kept.
    var replacedIDs: [String: ResourceID] { state.withLock { $0.replaced } }

    /// Tells the outbox a request went through: a write waiting to be tried again, or for a token,
    /// is tried now.
    func noteReachable() {
        let waiting = state.withLock { state -> Bool in
            if state.run == nil, state.awaitsToken {
                state.awaitsToken = false
                return true
            }
            guard state.run == nil, let retry = state.retry else { return false }
            retry.cancel()
            state.retry = nil
            return true
        }
        if waiting { startAutomaticRun() }
    }
}
