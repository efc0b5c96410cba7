import Foundation

/// A value behind a pthread mutex (`NSLock`), for the records and the store.
///
/// Why not `Synchronization.Mutex`: on Linux its contended path hands the lock over inside the
/// kernel (`FUTEX_LOCK_PI`), which ThreadSanitizer cannot see, so every contended access is reported
/// as a race and a real one would hide among them. A pthread mutex is intercepted by the sanitizer,
/// and costs the same uncontended.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written inside `withLock`, under `lock`.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
