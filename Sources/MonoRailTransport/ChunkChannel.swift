import Foundation

/// Hands a body's chunks from a callback-driven source (a URLSession delegate) to one reader, keeping
/// at most `limit` bytes received and not yet read.
///
/// The source calls ``yield(_:)`` and ``finish(_:)``; the reader iterates ``chunks``. Past half the
/// limit `onPause` asks the source to stop sending (a URLSession task is suspended), and once the
/// reader has brought it under a quarter, `onResume` asks it to go on; bytes already under way
/// still arrive meanwhile, and past the limit the body fails. When the reader stops — it is
/// cancelled, or every copy of ``chunks`` and of its iterators is gone — `onCancel` stops the source.
final class ChunkChannel: Sendable {
    private struct State {
        var chunks: [Data] = []
        /// The index of the next chunk to read: chunks are dropped in batches, not one by one.
        var head = 0
        var buffered = 0
        var end: TransportError??
        var waiter: CheckedContinuation<Data?, any Error>?
        var isPaused = false
    }

    private let state = Locked(State())
    private let limit: Int
    private let onCancel: @Sendable () -> Void
    private let onPause: @Sendable () -> Void
    private let onResume: @Sendable () -> Void

    init(
        limit: Int, onPause: @escaping @Sendable () -> Void = {}, onResume: @escaping @Sendable () -> Void = {},
        onCancel: @escaping @Sendable () -> Void
    ) {
        self.limit = limit
        self.onCancel = onCancel
        self.onPause = onPause
        self.onResume = onResume
    }

    /// Passes a chunk on. Returns `false`, and fails the body, when the reader has fallen `limit`
    /// bytes behind: the source must stop.
    func yield(_ chunk: Data) -> Bool {
        guard !chunk.isEmpty else { return true }
        let (waiter, accepted, pauses): (CheckedContinuation<Data?, any Error>?, Bool, Bool) = state.withLock {
            state in
            guard state.end == nil else { return (nil, false, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, true, false)
            }
            guard state.buffered + chunk.count <= limit else {
                state.end = .some(
                    TransportError(
                        .responseTooLarge,
                        "more than \(limit) bytes of the response arrived before they were read"))
                state.chunks = []
                state.head = 0
                state.buffered = 0
                return (nil, false, false)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            let pauses = !state.isPaused && state.buffered > limit / 2
            if pauses { state.isPaused = true }
            return (nil, true, pauses)
        }
        if pauses { onPause() }
        waiter?.resume(returning: chunk)
        return accepted
    }

    /// Ends the body: normally with `nil`, else with the failure the reader sees after the chunks
    /// already passed on.
    func finish(_ failure: TransportError?) {
        let waiter: CheckedContinuation<Data?, any Error>? = state.withLock { state in
            guard state.end == nil else { return nil }
            state.end = .some(failure)
            defer { state.waiter = nil }
            return state.waiter
        }
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume(returning: nil)
        }
    }

    /// Stops the source, once; the reader sees the body end with ``TransportError/Code/cancelled``.
    func cancel() {
        let isFirst = state.withLock { state in
            guard state.end == nil else { return false }
            state.end = .some(TransportError(.cancelled, "the response body was no longer read"))
            return true
        }
        guard isFirst else { return }
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: TransportError(.cancelled, "the response body was no longer read"))
        onCancel()
    }

    private func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                var resumes = false
                let answer: Result<Data?, TransportError>? = state.withLock { state in
                    if state.head < state.chunks.count {
                        let chunk = state.chunks[state.head]
                        state.chunks[state.head] = Data()
                        state.head += 1
                        state.buffered -= chunk.count
                        if state.head == state.chunks.count || state.head >= 64 {
                            state.chunks.removeFirst(state.head)
                            state.head = 0
                        }
                        if state.isPaused, state.buffered < limit / 4 {
                            state.isPaused = false
                            resumes = true
                        }
                        return .success(chunk)
                    }
                    if let end = state.end {
                        if let failure = end { return .failure(failure) }
                        return .success(nil)
                    }
                    state.waiter = continuation
                    return nil
                }
                if resumes { onResume() }
                if let answer { continuation.resume(with: answer) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The body, for one reader.
    var chunks: Chunks { Chunks(reader: Reader(channel: self)) }

    /// Stops the source once nothing can read the body any more.
    final class Reader: Sendable {
        let channel: ChunkChannel
        init(channel: ChunkChannel) { self.channel = channel }
        deinit { channel.cancel() }
    }

    /// The chunks as an asynchronous sequence.
    struct Chunks: AsyncSequence, Sendable {
        typealias Element = Data
        let reader: Reader

        struct AsyncIterator: AsyncIteratorProtocol {
            let reader: Reader
            mutating func next() async throws -> Data? {
                try await reader.channel.next()
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(reader: reader)
        }
    }
}
