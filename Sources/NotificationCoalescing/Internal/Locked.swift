#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(Darwin)
package typealias LockPrimitive = os_unfair_lock
#else
package typealias LockPrimitive = pthread_mutex_t
#endif

/// A value behind a lock, used as a transaction: `withLock { state in … }`.
///
/// Unlike `Synchronization.Mutex`, the value may be non-`Sendable` (pending `Notification`s are), the body
/// may return a non-`Sendable` result, and ThreadSanitizer sees the locking (the Linux `Mutex` is a raw
/// futex that TSan does not understand, so it reports false races). The value and the lock live in one
/// allocation. Never call out to user code inside `withLock`.
package struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: the value is read and written only inside `withLock`, which holds the lock
    // for the whole access.
    private let storage: LockStorage<Value>

    package init(_ value: Value) {
        storage = LockStorage.make(value)
    }

    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

/// The allocation behind ``Locked``: the value as the header, the lock as the single element, so the
/// lock's address is stable and needs no allocation of its own.
private final class LockStorage<Value>: ManagedBuffer<Value, LockPrimitive> {
    static func make(_ value: Value) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
            lock.initialize(to: os_unfair_lock())
            #else
            lock.initialize(to: pthread_mutex_t())
            let rc = pthread_mutex_init(lock, nil)
            precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
            #endif
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if !canImport(Darwin)
            pthread_mutex_destroy(lock)
            #endif
            _ = lock.deinitialize(count: 1)
        }
    }

    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, lock in
            #if canImport(Darwin)
            os_unfair_lock_lock(lock)
            defer { os_unfair_lock_unlock(lock) }
            #else
            pthread_mutex_lock(lock)
            defer { pthread_mutex_unlock(lock) }
            #endif
            return try body(&value.pointee)
        }
    }
}
