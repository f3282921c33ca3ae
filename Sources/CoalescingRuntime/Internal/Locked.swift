#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("Locked: unknown C library; add its lock primitive")
#endif

#if canImport(Darwin)
@usableFromInline package typealias LockPrimitive = os_unfair_lock
#else
@usableFromInline package typealias LockPrimitive = pthread_mutex_t
#endif

/// A value behind a lock, used as a transaction: `withLock { state in … }`.
///
/// Unlike `Synchronization.Mutex` (iOS 18 / macOS 15), it exists on every supported system, the value
/// may be non-`Sendable` (pending `Notification`s are), the body may return a non-`Sendable` result, and
/// ThreadSanitizer sees the locking. The value and the lock live in one allocation. Never call out to user
/// code inside `withLock`.
@usableFromInline
package struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: the value is read and written only inside `withLock`, which holds the lock
    // for the whole access.
    @usableFromInline let storage: LockStorage<Value>

    package init(_ value: Value) {
        storage = LockStorage.make(value)
    }

    // Inlinable: the other modules of the package lock on every request and delivery, and a call into
    // unspecialised generic code here cost more than the lock itself.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

/// The storage of a ``Locked`` value: the value as the header, the lock as the one element (its address is
/// stable for the object's life, as a lock's must be).
@usableFromInline
package final class LockStorage<Value>: ManagedBuffer<Value, LockPrimitive> {
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
        // An empty transaction after the value was written: the first thread to lock it later sees the
        // value through the lock (a hand-off ThreadSanitizer can follow, whatever carried the reference).
        storage.withLock { _ in }
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

    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
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
