import Foundation

// Replaying: the kept writes sent in order, each exactly once.
extension Outbox {
    /// Whether kept writes wait for ``flush()`` instead of being sent on their own — after they are
    /// kept, on retries, and when a request goes through. For an app that sends only on Wi-Fi.
    /// Setting it starts no write beyond the ones being sent, if any; ``pause()`` waits for those.
    /// Setting it back to `false` sends what waits.
    public var isPaused: Bool {
        get { state.withLock { $0.isPaused } }
        set {
            state.withLock { $0.isPaused = newValue }
            if !newValue { startAutomaticRun() }
        }
    }

    /// Pauses automatic sending (``isPaused``) and returns once no write is being sent: the ones in
    /// flight, if any, have their answers, and no other starts unless ``flush()`` is called. For a store
    /// about to hand its storage file to another.
    public func pause() async {
        let run = state.withLock { state in
            state.isPaused = true
            state.retry?.cancel()
            state.retry = nil
            return state.run
        }
        _ = await run?.value
    }

    /// A replay run, unless paused or waiting for a token.
    func startAutomaticRun() {
        guard !state.withLock({ $0.isPaused || $0.awaitsToken }) else { return }
        startRun()
    }

    /// A token is to be had again: what waited for one is sent.
    package func tokenDidChange() {
        let waited = state.withLock { state in
            defer { state.awaitsToken = false }
            return state.awaitsToken
        }
        if waited { startAutomaticRun() }
    }

    /// The replay run, started if none is running; `isNew` says whether this call started it.
    @discardableResult
    func startRun() -> (run: Task<RunResult, Never>, isNew: Bool) {
        state.withLock { state in
            if let run = state.run { return (run, false) }
            state.retry?.cancel()
            state.retry = nil
            // A run the app asks for tries again whether or not a token came.
            state.awaitsToken = false
            let run = Task { [weak self] in
                guard let self else { return RunResult.drained }
                let result = await self.replay()
                self.state.withLock { state in
                    state.run = nil
                    if case .stopped = result { state.isUnreachable = true } else { state.isUnreachable = false }
                }
                switch result {
                case .stopped, .waiting: self.scheduleRetry()
                case .drained: break
                }
                return result
            }
            state.run = run
            return (run, true)
        }
    }

    /// What a replay run does next.
    private enum Next {
        /// Send this write with its model's replay.
        case send(Entry, any OutboxReplaying)
        /// Park the write with this sequence: it depends on the parked write `behind`.
        case park(Int64, behind: Int64)
        /// Nothing more can be sent now; the earliest write waiting after a failed answer may be
        /// sent then, and this was its failure.
        case none(waiting: (ContinuousClock.Instant, APIError)?)
    }

    /// The first kept write of a restored model that waits for no write before it — of the same
    /// record, or creating a record it names — that is parked, being sent, waiting after a failed
    /// answer, or not yet sendable itself. Order holds along every record and chain of ids a create
    /// made (local ids, and ids the app gave the records it creates); a write on no such chain goes
    /// on past the others.
    private static func next(in state: State, now: ContinuousClock.Instant) -> Next {
        var parkedRecords: [WrittenRecord: Int64] = [:]
        var parkedChains: [String: Int64] = [:]
        var heldRecords: Set<WrittenRecord> = []
        var heldChains: Set<String> = []
        var earliest: (ContinuousClock.Instant, APIError)?
        // A long outbox is scanned once per write sent: each entry is read in place, not copied,
        // and a body is walked for the ids it names only once a create is held or parked.
        for index in state.entries.indices {
            let record = WrittenRecord(model: state.entries[index].write.model, id: state.entries[index].write.id)
            let isParked = state.entries[index].isParked
            let names =
                parkedChains.isEmpty && heldChains.isEmpty
                ? [] : state.entries[index].write.namedIDs { heldChains.contains($0) || parkedChains[$0] != nil }
            let parkedBehind = parkedRecords[record] ?? names.lazy.compactMap { parkedChains[$0] }.first
            let notBefore = state.entries[index].notBefore
            let isWaiting = notBefore.map { $0 > now } ?? false
            let isIdle = !isParked && !state.entries[index].isSending
            if isIdle, let parkedBehind { return .park(state.entries[index].write.sequence, behind: parkedBehind) }
            let isHeld = heldRecords.contains(record) || !names.isDisjoint(with: heldChains)
            if isIdle, !isHeld, !isWaiting, state.entries[index].isKept,
                let replay = state.replays[state.entries[index].write.model]
            {
                return .send(state.entries[index], replay)
            }
            let sequence = state.entries[index].write.sequence
            let chain = state.entries[index].write.chainedID
            if isParked {
                parkedRecords[record] = sequence
                if let chain { parkedChains[chain] = sequence }
            } else {
                heldRecords.insert(record)
                if let chain { heldChains.insert(chain) }
            }
            if isWaiting, let notBefore, let failure = state.entries[index].failure,
                earliest.map({ notBefore < $0.0 }) ?? true
            {
                earliest = (notBefore, failure)
            }
        }
        return .none(waiting: earliest)
    }

    /// One attempt of a write, and how it ended.
    private struct Attempt: Sendable {
        var entry: Entry
        var write: PendingWrite
        var outcome: Outcome
        var store: ResourceStore
    }

    /// Sends kept writes until none is left that can be sent now: the rest are parked, wait after
    /// a failed answer, wait for their model to be restored — or the server cannot be reached.
    /// Writes on no common record or chain go out side by side, up to
    /// ``OutboxLimits/concurrentWrites``.
    private func replay() async -> RunResult {
        await withTaskGroup(of: [Attempt].self) { group in
            var sending = 0
            var stopped: APIError?
            var waiting: (ContinuousClock.Instant, APIError)?
            while true {
                starting: while stopped == nil {
                    waiting = nil
                    let (next, store, replaced) = state.withLock {
                        state -> (Next, ResourceStore?, [String: ResourceID]) in
                        // Paused between two writes of an automatic run: the next waits, unless a flush does.
                        guard !state.isPaused || state.flushes > 0 else { return (.none(waiting: nil), nil, [:]) }
                        // A 401 answered one write: the others would meet it too, until a token comes.
                        guard !state.awaitsToken else { return (.none(waiting: nil), nil, [:]) }
                        return (Self.next(in: state, now: .now), state.store, state.replaced)
                    }
                    guard let store, sending < max(1, store.configuration.outboxLimits.concurrentWrites) else {
                        break starting
                    }
                    switch next {
                    case .none(let earliest):
                        waiting = earliest
                        break starting
                    case .park(let sequence, let behind):
                        await park(sequence, behind: behind, in: store)
                    case .send(let entry, let replay):
                        if let (key, members) = batch(startingAt: entry, in: store) {
                            switch await begin(members, replacing: replaced, in: store) {
                            case .failed(let error): stopped = error
                            case .begun(let attempted):
                                sending += 1
                                group.addTask {
                                    let outcomes = await replay.send(attempted, key: key, in: store)
                                    return zip(attempted, outcomes).map { member, outcome in
                                        Attempt(
                                            entry: member.entry, write: member.write, outcome: outcome, store: store)
                                    }
                                }
                            case .skipped: break
                            }
                            continue starting
                        }
                        switch await begin(entry, replacing: replaced, in: store) {
                        case .skipped: break
                        case .failed(let error): stopped = error
                        case .begun(let attempted):
                            sending += 1
                            group.addTask {
                                let outcome = await replay.send(attempted, entry: entry, in: store)
                                return [Attempt(entry: entry, write: attempted, outcome: outcome, store: store)]
                            }
                        }
                    }
                }
                guard sending > 0 else { break }
                guard let attempts = await group.next() else { break }
                sending -= 1
                for attempt in attempts {
                    if let error = await take(attempt) {
                        stopped = stopped ?? error
                    } else {
                        // An answer came: the server is there after all, and what found it away goes again.
                        stopped = nil
                    }
                }
            }
            await commitLogging()
            if let stopped { return .stopped(stopped) }
            guard let (notBefore, failure) = waiting else { return .drained }
            state.withLock { $0.retryDelay = max(.milliseconds(1), notBefore - .now) }
            return .waiting(failure)
        }
    }

    /// How starting to send a write went.
    private enum Beginning {
        /// Noted as attempted: send this.
        case begun(PendingWrite)
        /// Not sent: it names a record whose create the server refused, and was refused with it.
        case skipped
        /// Storage could not note the attempt: nothing more is sent.
        case failed(APIError)
    }

    /// How starting to send a graph went.
    private enum BatchBeginning {
        /// Noted as attempted, every write of it: send these.
        case begun([BatchMember])
        /// Not sent: a write of it names a record whose create was refused.
        case skipped
        /// Storage could not note the attempts: nothing more is sent.
        case failed(APIError)
    }

    /// ``begin(_:replacing:in:)`` for each write of a graph; a write that cannot go leaves the rest
    /// unsent this time (they go on their own, or together, once it is settled).
    private func begin(_ members: [BatchMember], replacing replaced: [String: ResourceID], in store: ResourceStore)
        async -> BatchBeginning
    {
        var begun: [BatchMember] = []
        let graph = Set(
            members.compactMap { member in
                member.write.verb == .create ? member.write.id.flatMap { $0.isLocal ? $0.description : nil } : nil
            })
        for member in members {
            switch await begin(member.entry, replacing: replaced, graph: graph, in: store) {
            case .failed(let error):
                unmarkSending(begun)
                return .failed(error)
            case .skipped:
                unmarkSending(begun)
                return .skipped
            case .begun(let attempted):
                var started = member
                started.write = attempted
                begun.append(started)
            }
        }
        return .begun(begun)
    }

    /// Puts writes begun for a graph that will not be sent back among those waiting to be.
    private func unmarkSending(_ members: [BatchMember]) {
        let sequences = Set(members.map(\.write.sequence))
        state.withLock { state in
            for index in state.entries.indices where sequences.contains(state.entries[index].write.sequence) {
                state.entries[index].isSending = false
            }
        }
    }

    /// Notes a write's attempt, unless an earlier commit did ahead of it, and marks it as being sent.
    ///
    /// - Parameter graph: The local ids of the creates sent in the same atomic request, which the
    ///   write may name.
    private func begin(
        _ entry: Entry, replacing replaced: [String: ResourceID], graph: Set<String> = [], in store: ResourceStore
    ) async -> Beginning {
        let write = entry.write.replacingLocalIDs(replaced)
        // A local id still unknown here belongs to a create that was refused or discarded.
        let missing = write.referencedLocalIDs.union(
            write.verb != .create && write.id?.isLocal == true ? [write.id?.description ?? ""] : []
        ).subtracting(graph)
        if !missing.isEmpty {
            await reject(
                entry,
                APIError(
                    .dependencyRejected,
                    "\(write.model) write \(write.sequence) names \(missing.sorted().joined(separator: ", ")), "
                        + "whose create the server refused"),
                in: store)
            return .skipped
        }
        var attempted = write
        attempted.attempts += 1
        // Noted before sending: an earlier attempt of this key may still be running on the server.
        do {
            try await commit(noting: write.sequence)
        } catch {
            return .failed(
                APIError(.transport, "the outbox's storage could not be written: \(error)", underlyingError: error))
        }
        // Rewritten here, by a create confirmed after it was kept: storage gets it with the next commit.
        let isRewritten = !replaced.isEmpty && write != entry.write
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else { return }
            state.entries[index].write = attempted
            state.entries[index].isSending = true
            if isRewritten { state.unsettled.rewritten.insert(write.sequence) }
        }
        tell(.sent(attempted))
        return .begun(attempted)
    }

    /// Takes an attempt's answer into the outbox; returns the error that stops the run, when the
    /// server could not be reached.
    private func take(_ attempt: Attempt) async -> APIError? {
        let (entry, write, store) = (attempt.entry, attempt.write, attempt.store)
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else { return }
            state.entries[index].isSending = false
        }
        switch attempt.outcome {
        case .confirmed(let newID, let etag):
            await confirm(entry, write: write, newID: newID, etag: etag, in: store)
        case .rejected(let error) where error.statusCode == 404 || error.statusCode == 410:
            await reject(entry, error, in: store)
        case .rejected(let error):
            var parked = entry
            parked.write = write
            await park(parked, error, in: store)
        case .unreachable(let error, let retryAfter) where Self.isAnswer(error):
            // The server is up and failed this write: it waits, and the writes that do not depend
            // on it go on.
            var failed = write
            failed.failures += 1
            let limits = store.configuration.outboxLimits
            let age = Duration.seconds(max(0, Date().timeIntervalSince(failed.createdAt)))
            let delay = Self.retryDelay(asked: retryAfter, attempts: failed.failures)
            // Past its age before the server would take it again: parked now, not at a timer that
            // the server's wait would set beyond the limit.
            let overAge = age >= limits.maximumAge || (retryAfter != nil && age + delay > limits.maximumAge)
            if failed.failures >= limits.maximumFailures || overAge {
                var parked = entry
                parked.write = failed
                var parking = error
                parking.message +=
                    overAge && age < limits.maximumAge
                    ? " (the server asked to wait \(Self.seconds(retryAfter ?? delay)) s, past the outbox's maximum age of "
                        + "\(Self.seconds(limits.maximumAge)) s: parked)"
                    : " (failed \(failed.failures) times over \(Self.seconds(age)) s: parked)"
                await park(parked, parking, in: store)
                return nil
            }
            state.withLock { state in
                guard let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) else {
                    return
                }
                state.entries[index].write.failures = failed.failures
                state.entries[index].notBefore = .now + delay
                state.entries[index].failure = error
                state.unsettled.rewritten.insert(write.sequence)
            }
            tell(.retrying(failed, error, after: delay))
        case .unauthorized(let error):
            state.withLock { $0.awaitsToken = true }
            tell(.waitingForToken(write, error))
            return error
        case .unreachable(let error, let retryAfter):
            let delay = Self.retryDelay(asked: retryAfter, attempts: write.attempts)
            state.withLock { state in
                state.retryDelay = delay
                if let index = state.entries.firstIndex(where: { $0.write.sequence == write.sequence }) {
                    state.entries[index].mayHaveApplied = true
                }
            }
            tell(.retrying(write, error, after: delay))
            return error
        }
        return nil
    }

    /// Whether the server answered: a failure status, or an answer that could not be read. No
    /// connection, a timeout, or a connection lost is no answer.
    private static func isAnswer(_ error: APIError) -> Bool {
        error.statusCode != nil || isUnreadable(error)
    }

    /// Whether the server answered with something that cannot be read as an answer.
    static func isUnreadable(_ error: APIError) -> Bool {
        [.decodingFailed, .invalidResponse, .inconsistentResponse, .responseTooLarge].contains(error.code)
    }

    func storage() -> any OutboxStorage {
        state.withLock { $0.storage } ?? InMemoryOutboxStorage()
    }
}
