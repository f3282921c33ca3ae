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

/// A lock at a stable address (a `ManagedBuffer` element, or memory allocated by hand): what ``Locked``
/// and the striped locks are built on.
@usableFromInline
package struct LockCell {
    @usableFromInline var lock: LockPrimitive

    @usableFromInline init(lock: LockPrimitive) {
        self.lock = lock
    }

    /// Initialises the cell at `cell` (unlocked).
    package static func initialize(_ cell: UnsafeMutablePointer<LockCell>) {
        #if canImport(Darwin)
        cell.initialize(to: LockCell(lock: os_unfair_lock()))
        #else
        cell.initialize(to: LockCell(lock: pthread_mutex_t()))
        let rc = pthread_mutex_init(&cell.pointee.lock, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
        #endif
    }

    /// Undoes ``initialize(_:)``.
    package static func deinitialize(_ cell: UnsafeMutablePointer<LockCell>) {
        #if !canImport(Darwin)
        pthread_mutex_destroy(&cell.pointee.lock)
        #endif
        _ = cell.deinitialize(count: 1)
    }

    /// Runs `body` holding the lock at `cell`. Never call out to user code inside.
    @inlinable
    package static func withLock<Result>(
        _ cell: UnsafeMutablePointer<LockCell>, _ body: () throws -> Result
    ) rethrows -> Result {
        // `lock` is the cell's only stored property, at offset 0 (not `MemoryLayout.offset(of: \.lock)`: the
        // key path was instantiated — a retain and a release — on every lock).
        let lock = UnsafeMutableRawPointer(cell).assumingMemoryBound(to: LockPrimitive.self)
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body()
    }
}

/// The allocation behind ``Locked``: the value as the header, the lock as the single element, so the
/// lock's address is stable and needs no allocation of its own.
@usableFromInline
package final class LockStorage<Value>: ManagedBuffer<Value, LockCell> {
    static func make(_ value: Value) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { LockCell.initialize($0) }
        // An empty transaction after the value was written: the first thread to lock it later sees the
        // value through the lock (a hand-off ThreadSanitizer can follow, whatever carried the reference).
        storage.withLock { _ in }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { LockCell.deinitialize($0) }
    }

    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, cell in
            try LockCell.withLock(cell) { try body(&value.pointee) }
        }
    }
}
