import Foundation
import GRDB
import MonoRailTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(UIKit) && !os(watchOS)
    import UIKit
#endif

// Quitting: what a read stored is on disk when the app ends, whether or not it called flush().
extension SQLiteStorage {
    /// The storages open in this process, weakly: the way out commits what each has queued.
    private static let opened = Locked<[ObjectIdentifier: WeakStorage]>([:])

    private struct WeakStorage: Sendable {
        weak var storage: SQLiteStorage?
    }

    /// Registers a storage so that the process's way out commits its queued writes: `exit()` and
    /// the end of `main` (through `atexit`), and on iOS, tvOS and visionOS the app entering the
    /// background or being terminated, where the system may end it without another word.
    static func commitOnQuit(_ storage: SQLiteStorage) {
        _ = quitHandlers
        opened.withLock { opened in
            opened = opened.filter { $0.value.storage != nil }
            opened[ObjectIdentifier(storage)] = WeakStorage(storage: storage)
        }
    }

    /// Installed once, by the first storage opened: a static `let` is initialized once.
    private static let quitHandlers: Bool = {
        atexit { SQLiteStorage.commitAllNow() }
        #if canImport(UIKit) && !os(watchOS)
            for name in [UIApplication.didEnterBackgroundNotification, UIApplication.willTerminateNotification] {
                _ = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in
                    SQLiteStorage.commitAllNow()
                }
            }
        #endif
        return true
    }()

    /// Commits the queued writes of every open storage, on this thread, and marks each file closed.
    static func commitAllNow() {
        let storages = opened.withLock { $0.values.compactMap(\.storage) }
        for storage in storages { storage.commitNow() }
    }

    /// Commits what is queued and what the background writer took and has not committed, on this
    /// thread: GRDB's writer queue runs it after a commit under way. Writing a batch twice is
    /// harmless, each row is an upsert by fetch order; a failure here has no one left to tell. Then
    /// marks the file closed by this session.
    package func commitNow() {
        let batches = pending.withLock { pending -> [Batch] in
            defer { pending.batches = [] }
            return pending.committing + pending.batches
        }
        if !batches.isEmpty {
            let use = uses.withLock { $0.tick() }
            try? pool.write { db in try self.writeBatches(batches, use: use, db) }
        }
        // The app may come back from the background and write again: that write marks it open again.
        markClosed()
    }

    /// Marks the file closed by this session: the next one need not read every page. Called on the
    /// way out, on the caller's thread. Not when the storage goes away: that may be on the database's
    /// own queue, where a write would be re-entrant; a file let go of without quitting is read whole
    /// at its next open, as after a kill.
    private func markClosed() {
        guard sessionOpen.withLock({ $0 }) else { return }
        do {
            try pool.write { db in try db.execute(sql: "UPDATE total SET session_open = 0") }
            sessionOpen.withLock { $0 = false }
        } catch {
            // Left marked open: the next session reads every page, as after a kill.
        }
    }
}
