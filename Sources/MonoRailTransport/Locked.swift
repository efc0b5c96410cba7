import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a pthread mutex: the one lock every MonoRail module uses.
///
/// Why not `Synchronization.Mutex`: on Linux its contended path hands the lock over inside the
/// kernel (`FUTEX_LOCK_PI`), which ThreadSanitizer cannot see, so every contended access is reported
/// as a race and a real one would hide among them. A pthread mutex is intercepted by the sanitizer.
///
/// Why not `NSLock`: every record owns one of these, and an `NSLock` costs two allocations of its
/// own. Here the value and the mutex share one allocation (the pattern of SwiftNIO's lock box).
package struct Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `ManagedBuffer` is never `Sendable`. The value inside is only read or written in
    // `withLock`, holding the mutex, and the mutex is only used through pthread calls.
    private let storage: LockedStorage<Value>

    /// An autoclosure: the value is made where it is kept, not made and then copied there (every
    /// record's state is one of these, and copying it retained each of its references).
    package init(_ value: @autoclosure () -> Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

/// The value as the header and the mutex as the one tail element of a single allocation; the
/// mutex has a stable address there, as pthreads requires.
private final class LockedStorage<Value: Sendable>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: () -> Value) -> LockedStorage {
        let buffer = create(minimumCapacity: 1) { _ in value() }
        let storage = unsafeDowncast(buffer, to: LockedStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            _ = pthread_mutex_init(mutex, nil)
        }
        return storage
    }

    @inline(__always) func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    // The header (the value) is destroyed by `ManagedBuffer` itself; the tail element is not.
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
