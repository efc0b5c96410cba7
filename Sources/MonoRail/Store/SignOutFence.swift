import Foundation
import MonoRailTransport

/// What ``ResourceStore/clear()`` puts between one account and the next: every answer to a request
/// sent before it — a read, a page, an outbox answer, a pushed change — is dropped when it arrives,
/// neither merged nor kept.
///
/// Requests are ordered by their ``FetchStamp``: the fence is the stamp of the clear, and an answer
/// stamped at or before it belongs to the account that signed out. The identity map holds a copy,
/// checked under its lock by every merge; the persist stage enters here, so that the clear waits for
/// writes to storage already under way before it empties the storage, and lets none begin after.
final class SignOutFence: Sendable {
    private struct State {
        /// The order of the last clear's stamp; `Int64.min` before any.
        var fence = Int64.min
        /// Writes to storage under way, by token: the stamp of the answer each keeps.
        var writing: [Int: Int64] = [:]
        var nextToken = 0
        /// Clears waiting for the writes they fenced out to finish.
        var waiting: [(fence: Int64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Whether an answer stamped `stamp` came from before the last clear.
    func excludes(_ stamp: FetchStamp) -> Bool {
        state.withLock { stamp.order <= $0.fence }
    }

    /// Runs `keep`, a write to storage of what an answer stamped `stamp` brought, unless a clear came
    /// after the answer was asked for; a clear that comes while it runs waits for it.
    ///
    /// - Returns: Whether it ran.
    @discardableResult
    func keeping(_ stamp: FetchStamp, _ keep: () async -> Void) async -> Bool {
        let token = state.withLock { state -> Int? in
            guard stamp.order > state.fence else { return nil }
            defer { state.nextToken += 1 }
            state.writing[state.nextToken] = stamp.order
            return state.nextToken
        }
        guard let token else { return false }
        await keep()
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.writing[token] = nil
            return Self.released(&state)
        }
        for continuation in released { continuation.resume() }
        return true
    }

    /// Closes the fence at `stamp` and returns once no write to storage of an answer from before it
    /// is under way.
    func close(at stamp: FetchStamp) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.fence = max(state.fence, stamp.order)
                state.waiting.append((stamp.order, continuation))
                return Self.released(&state)
            }
            for continuation in released { continuation.resume() }
        }
    }

    /// The clears no write they wait for holds any more.
    private static func released(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var released: [CheckedContinuation<Void, Never>] = []
        state.waiting.removeAll { waiting in
            guard !state.writing.values.contains(where: { $0 <= waiting.fence }) else { return false }
            released.append(waiting.continuation)
            return true
        }
        return released
    }
}
