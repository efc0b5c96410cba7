import Foundation
import Logging
import MonoRailTransport

// `event: reset`: the server no longer keeps the changes since the cursor, so what the app holds is
// read again.
extension LiveUpdates {
    /// Marks what storage holds stale, then reads again every live query and every instance the
    /// store holds, eight requests at a time;
    /// a record the server no longer has is deleted as a pushed destroy deletes it. Failures are
    /// reported and do not stop the others.
    func resetAll(in store: ResourceStore, logger: Logger) async {
        // What storage holds missed the same changes: stale, before what is read again freshens it.
        do {
            try await store.configuration.storage?.markStale()
        } catch {
            logger.warning("live updates: after a reset, the record cache could not mark its records stale: \(error)")
        }
        let instances = store.identityMap.withLock { $0.allInstances }
        let queries = store.broadcasters.allQueries()
        var work: [@Sendable () async -> APIError?] = queries.map { queries in { await queries.refreshAll() } }
        for instance in instances {
            work.append { await instance.readAgain(in: store) }
        }
        let failures = await withTaskGroup(of: APIError?.self) { group in
            var failures: [APIError] = []
            var waiting = work[...]
            for _ in 0..<8 {
                guard let job = waiting.popFirst() else { break }
                group.addTask { await job() }
            }
            while let finished = await group.next() {
                if let finished { failures.append(finished) }
                if let job = waiting.popFirst() { group.addTask { await job() } }
            }
            return failures
        }
        if let first = failures.first {
            report(
                APIError(
                    first.code,
                    "after a reset, \(failures.count) of \(work.count) reads failed; the first: \(first.message)"),
                logger: logger)
        }
    }
}
