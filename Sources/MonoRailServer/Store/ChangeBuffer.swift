import MonoRailTransport

/// The newest changes, read from the log once for every stream of this process: a commit wakes
/// every stream, one of them reads the log, and the others take the changes from here. A stream
/// whose cursor is older than what the buffer holds reads the log itself.
final class ChangeBuffer: Sendable {
    private struct State {
        /// Every change with an id in `(from, to]`, oldest first (ids may skip: a write rolled back).
        var changes: [Change] = []
        var from: Int64
        var to: Int64
        var isReading = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var logReads = 0
    }

    private let state: Locked<State>
    /// How many changes it keeps.
    let capacity: Int

    /// An empty buffer; ``begin(after:)`` says where the log stands.
    init(capacity: Int = 4096) {
        state = Locked(State(from: 0, to: 0))
        self.capacity = max(1, capacity)
    }

    /// Holds what is committed after `newest`, before any stream reads from it.
    func begin(after newest: Int64) {
        state.withLock { state in
            state.from = newest
            state.to = newest
        }
    }

    /// How many times the buffer read the log: once per batch of commits, however many streams.
    var logReads: Int { state.withLock { $0.logReads } }

    private enum Step {
        case serve([Change])
        case readLog(after: Int64)
        case wait
        case readOwn
    }

    /// Up to `limit` changes after `cursor`, oldest first.
    ///
    /// - Parameters:
    ///   - newest: The newest change known to be committed; when it is newer than what the buffer
    ///     holds, one caller reads the log while the others wait for it.
    ///   - refresh: Read the log even if nothing newer is known (a notification may have been lost).
    ///   - read: Reads the log: up to a number of changes after an id.
    func changes(
        after cursor: Int64, limit: Int, newest: Int64, refresh: Bool,
        read: (Int64, Int) throws -> [Change]
    ) async throws -> [Change] {
        var hasRead = false
        while true {
            let step = state.withLock { state -> Step in
                guard cursor >= state.from else { return .readOwn }
                if !hasRead, newest > state.to || refresh {
                    if state.isReading { return .wait }
                    state.isReading = true
                    state.logReads += 1
                    return .readLog(after: state.to)
                }
                return .serve(Array(state.changes.lazy.filter { $0.id > cursor }.prefix(limit)))
            }
            switch step {
            case .serve(let changes):
                return changes
            case .readOwn:
                return try read(cursor, limit)
            case .wait:
                // Someone else reads; what they read is what this caller would have.
                await withCheckedContinuation { waiter in
                    let isDone = state.withLock { state in
                        if state.isReading { state.waiters.append(waiter) }
                        return !state.isReading
                    }
                    if isDone { waiter.resume() }
                }
                hasRead = true
            case .readLog(let after):
                let fresh: [Change]
                do {
                    fresh = try read(after, capacity)
                } catch {
                    finishReading(appending: [])
                    throw error
                }
                finishReading(appending: fresh)
                hasRead = true
            }
        }
    }

    private func finishReading(appending fresh: [Change]) {
        let waiters = state.withLock { state in
            // What was read covers every change after the old end, up to its last.
            for change in fresh where change.id > state.to { state.changes.append(change) }
            state.to = max(state.to, fresh.last?.id ?? state.to)
            if state.changes.count > capacity {
                let dropped = state.changes.count - capacity
                state.from = state.changes[dropped - 1].id
                state.changes.removeFirst(dropped)
            }
            state.isReading = false
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
