import Foundation

// Graphs: a record created in the outbox and the writes after it that name it, sent together as
// one JSON:API atomic operations request when the server serves the extension — all of it taken,
// or none. The writes keep the request's key (``PendingWrite/batch``), so a replay, after a restart
// too, sends the same writes together again under it.
extension Outbox {
    /// A write of a graph, with its entry and its model's replay.
    struct BatchMember: Sendable {
        var write: PendingWrite
        var entry: Entry
        var replay: any OutboxReplaying
    }

    /// The writes to send with `entry` in one atomic request, and its key; `nil` to send it alone.
    ///
    /// A graph starts at a create of a record with a local id, none of its writes sent before, and
    /// takes each later write that names one of the graph's local ids — its record's, or in its
    /// linkage — and no other the server has not replaced yet, when its model's server takes atomic
    /// operations at the same path. A graph already sent once is sent again as it was.
    func batch(startingAt entry: Entry, in store: ResourceStore) -> (key: String, members: [BatchMember])? {
        let (entries, replays, replaced) = state.withLock { ($0.entries, $0.replays, $0.replaced) }
        func isReady(_ candidate: Entry) -> Bool {
            !candidate.isParked && !candidate.isSending && candidate.isKept
                && (candidate.notBefore.map { $0 <= .now } ?? true)
        }
        let key: String
        var chosen: [Entry]
        if let existing = entry.write.batch {
            // Sent together, they failed together: the graph goes again as a whole when its first
            // write is due, whatever back-off each of the others was given.
            chosen = entries.filter { $0.write.batch == existing }
            guard chosen.count > 1, chosen.allSatisfy({ !$0.isParked && !$0.isSending && $0.isKept }) else {
                return nil
            }
            key = existing
        } else {
            guard entry.write.verb == .create, let root = entry.write.id, root.isLocal, entry.write.attempts == 0,
                let path = replays[entry.write.model]?.atomicOperationsPath(in: store)
            else { return nil }
            var locals: Set<String> = [root.description]
            chosen = [entry]
            for candidate in entries where candidate.write.sequence > entry.write.sequence {
                let write = candidate.write
                guard write.batch == nil, write.attempts == 0, isReady(candidate),
                    replays[write.model]?.atomicOperationsPath(in: store) == path
                else { continue }
                let own = write.id.flatMap { $0.isLocal ? $0.description : nil }
                let named = write.referencedLocalIDs
                let joins = own.map(locals.contains) == true || !named.isDisjoint(with: locals)
                // A write that also needs a record created elsewhere waits for that one.
                guard joins, named.subtracting(locals).allSatisfy({ replaced[$0] != nil }) else { continue }
                if write.verb == .create, let own { locals.insert(own) }
                chosen.append(candidate)
            }
            guard chosen.count > 1 else { return nil }
            key = entry.write.idempotencyKey
        }
        let members = chosen.compactMap { candidate in
            replays[candidate.write.model].map { BatchMember(write: candidate.write, entry: candidate, replay: $0) }
        }
        guard members.count == chosen.count else { return nil }
        // Marked before anything is sent: the next commit writes the key with the attempts.
        let marked = state.withLock { state -> Bool in
            let sequences = Set(members.map(\.write.sequence))
            let indices = state.entries.indices.filter { sequences.contains(state.entries[$0].write.sequence) }
            guard indices.count == members.count,
                indices.allSatisfy({ !state.entries[$0].isParked && !state.entries[$0].isSending })
            else { return false }
            for index in indices where state.entries[index].write.batch != key {
                state.entries[index].write.batch = key
                state.unsettled.rewritten.insert(state.entries[index].write.sequence)
            }
            return true
        }
        guard marked else { return nil }
        return (
            key,
            members.map { member in
                var member = member
                member.write.batch = key
                member.entry.write.batch = key
                return member
            }
        )
    }
}
