import Foundation
import Logging

// Committing: a sent write's answer merged, and the write removed or rewritten in storage.
extension Outbox {
    /// Commits what the run settled in memory since its last commit — with `sequence`, only when
    /// that write's attempt is not noted yet, in one transaction with it and the attempts of the
    /// next writes likely to be sent (``notedAhead`` in all), so that they go without a commit of
    /// their own.
    ///
    /// - Throws: The storage's error; what was to be committed stays to be committed.
    func commit(noting sequence: Int64? = nil) async throws {
        let (settling, removed, updated, notedBefore) = state.withLock {
            state -> (Unsettled, [Int64], [PendingWrite], [Int64: Int]) in
            let settling = state.unsettled
            let noting = sequence.map { Self.attemptsToNote(from: $0, in: state.entries) } ?? []
            // A write noted ahead goes without a commit: what is settled waits for the next one.
            guard sequence == nil ? !settling.isEmpty : !noting.isEmpty else { return (settling, [], [], [:]) }
            state.unsettled = Unsettled()
            var notedBefore: [Int64: Int] = [:]
            var updated: [PendingWrite] = []
            for index in noting {
                var write = state.entries[index].write
                notedBefore[write.sequence] = state.entries[index].noted
                write.attempts += 1
                state.entries[index].noted = write.attempts
                updated.append(write)
            }
            // Written as memory has them now, attempts begun included: a write noted ahead and not
            // sent is noted again before it goes.
            for index in state.entries.indices
            where settling.rewritten.contains(state.entries[index].write.sequence)
                && notedBefore[state.entries[index].write.sequence] == nil
            {
                notedBefore[state.entries[index].write.sequence] = state.entries[index].noted
                state.entries[index].noted = state.entries[index].write.attempts
                updated.append(state.entries[index].write)
            }
            return (settling, settling.removed.sorted(), updated, notedBefore)
        }
        guard !removed.isEmpty || !updated.isEmpty else { return }
        do {
            try await storage().settle(removing: removed, updating: updated)
        } catch {
            state.withLock { state in
                state.unsettled.formUnion(settling)
                for index in state.entries.indices {
                    if let noted = notedBefore[state.entries[index].write.sequence] {
                        state.entries[index].noted = noted
                    }
                }
            }
            throw error
        }
    }

    /// The entries whose attempts a commit notes: the write of `sequence`, unless its attempt is
    /// noted already, and the next kept writes likely to be sent, up to ``notedAhead`` in all.
    private static func attemptsToNote(from sequence: Int64, in entries: [Entry]) -> [Int] {
        guard let index = entries.firstIndex(where: { $0.write.sequence == sequence }),
            entries[index].noted <= entries[index].write.attempts
        else { return [] }
        var noting = [index]
        for later in entries.indices where later != index {
            guard noting.count < notedAhead else { break }
            if !entries[later].isParked, !entries[later].isSending, entries[later].isKept,
                entries[later].noted <= entries[later].write.attempts
            {
                noting.append(later)
            }
        }
        return noting
    }

    /// ``commit(noting:)`` where a failure is logged: the outbox's memory is ahead of storage
    /// until a later commit goes through, and after a crash writes the server took may be sent
    /// again under their keys.
    func commitLogging() async {
        do {
            try await commit()
        } catch {
            let logger = state.withLock { $0.store?.configuration.logger }
            logger?.error(
                """
                the outbox could not write what the server answered to its storage: \(error); \
                it is tried again with the next commit, and after a crash writes the server took \
                are sent again with their Idempotency-Key
                """)
        }
    }

    /// The write went through: it leaves the outbox, a create's local id is replaced in later
    /// writes and their instances, and the next write of the record expects the answer's entity
    /// tag in `If-Match`. A create's or delete's confirmation is committed at once, with the
    /// rewritten writes; an update's with the next commit.
    func confirm(
        _ entry: Entry, write: PendingWrite, newID: ResourceID?, etag: String?, in store: ResourceStore
    ) async {
        let local = entry.write.id.flatMap { $0.isLocal ? $0.description : nil }
        let record = WrittenRecord(entry.write)
        let instances = state.withLock { state -> [any ResourceModel] in
            if let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) {
                state.entries.remove(at: index)
            }
            state.unsettled.removed.insert(entry.write.sequence)
            var replacing: [String: ResourceID] = [:]
            if let local, let newID {
                state.replaced[local] = newID
                replacing[local] = newID
            }
            var instances: [any ResourceModel] = []
            var chained = false
            for index in state.entries.indices {
                // Without a local id to replace, only the record's next write can change.
                if chained, replacing.isEmpty { break }
                let isNextOfRecord = !chained && WrittenRecord(state.entries[index].write) == record
                guard isNextOfRecord || !replacing.isEmpty else { continue }
                var updated = state.entries[index].write.replacingLocalIDs(replacing)
                if isNextOfRecord {
                    chained = true
                    if updated.waitsForIfMatch {
                        updated.ifMatch = etag
                        updated.waitsForIfMatch = false
                    }
                }
                if updated != state.entries[index].write {
                    state.entries[index].write = updated
                    state.unsettled.rewritten.insert(updated.sequence)
                }
                if !replacing.isEmpty, let instance = state.entries[index].instance { instances.append(instance) }
            }
            return instances
        }
        if let local, let newID {
            for instance in instances { Self.replaceLocalIDs([local: newID], in: instance) }
        }
        // Sent again after a crash, a create the server took would make a second record on a
        // server that ignores Idempotency-Key.
        if entry.write.verb != .update { await commitLogging() }
        tell(.confirmed(write))
    }

    /// The record is gone from the server (`404`, `410`), or the write names a record whose create
    /// was discarded: it and the writes depending on it leave the outbox, each instance rolled back.
    /// A later delete of a record found gone is done, as it asked; a write already sent is decided by
    /// its own answer.
    func reject(_ entry: Entry, _ error: APIError, in store: ResourceStore) async {
        let isGone = error.statusCode == 404 || error.statusCode == 410
        let record = WrittenRecord(entry.write)
        let (refused, done) = state.withLock { state -> ([(Entry, APIError)], [Entry]) in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) else {
                return ([], [])
            }
            var refused = [(entry, error)]
            var done: [Entry] = []
            for later in Self.dependents(of: index, in: state.entries) {
                let dependent = state.entries[later]
                // Sent before a create's answer showed that its record is this one: the server is
                // answering it now.
                if dependent.isSending { continue }
                if isGone, WrittenRecord(dependent.write) == record {
                    if dependent.write.verb == .destroy {
                        done.append(dependent)
                    } else {
                        refused.append((dependent, error))
                    }
                } else {
                    refused.append((dependent, Self.dependencyError(dependent.write, on: entry.write, error)))
                }
            }
            let removed = Set(refused.map(\.0.write.sequence) + done.map(\.write.sequence))
            state.entries.removeAll { removed.contains($0.write.sequence) }
            state.unsettled.removed.formUnion(removed)
            return (refused, done)
        }
        // Latest first, so each field ends at the server's state.
        let replays = state.withLock { $0.replays }
        for (entry, error) in refused.reversed() {
            replays[entry.write.model]?.rollBack(entry.write, entry: entry, error: error, in: store)
        }
        for entry in done { await replays[entry.write.model]?.deleted(entry, in: store) }
        await commitLogging()
        for (entry, error) in refused { tell(.rejected(entry.write, error)) }
        for entry in done { tell(.confirmed(entry.write)) }
    }

    private static func dependencyError(_ write: PendingWrite, on cause: PendingWrite, _ error: APIError) -> APIError {
        APIError(
            .dependencyRejected,
            "\(write.model) write \(write.sequence) depends on write \(cause.sequence): \(error.message)",
            underlyingError: error)
    }

    /// Parks the write with this sequence, which depends on the parked write `behind`, with its
    /// dependents.
    func park(_ sequence: Int64, behind: Int64, in store: ResourceStore) async {
        let entry = state.withLock { state in state.entries.first { $0.write.sequence == sequence } }
        guard let entry else { return }
        let write = entry.write
        await park(
            entry,
            APIError(
                .dependencyRejected, "\(write.model) write \(write.sequence) waits for write \(behind), which is parked"
            ),
            in: store)
    }

    /// Parks the write and the writes depending on it: kept, not sent, each instance showing its
    /// values unsaved with the error, as after a direct write's refusal.
    func park(_ entry: Entry, _ error: APIError, in store: ResourceStore) async {
        let parked = state.withLock { state -> [(Entry, APIError)] in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == entry.write.sequence }) else {
                return []
            }
            state.entries[index].write = entry.write
            var parked = [(index, error)]
            for later in Self.dependents(of: index, in: state.entries) where !state.entries[later].isParked {
                parked.append((later, Self.dependencyError(state.entries[later].write, on: entry.write, error)))
            }
            return parked.map { index, error in
                state.entries[index].write.parking = PendingWrite.Parking(error)
                state.entries[index].notBefore = nil
                state.entries[index].failure = nil
                state.unsettled.rewritten.insert(state.entries[index].write.sequence)
                return (state.entries[index], error)
            }
        }
        let replays = state.withLock { $0.replays }
        for (entry, error) in parked.reversed() {
            replays[entry.write.model]?.park(entry.write, entry: entry, error: error, in: store)
        }
        await commitLogging()
        for (entry, error) in parked { tell(.parked(entry.write, error)) }
    }
}
