/// A fixed set of locks shared by many small objects, chosen by the object's address: an object that
/// needs a lock only for rare transitions (a token being removed) then needs no lock of its own — a
/// `pthread_mutex_t` is 40 bytes on Linux, more than such an object's whole state.
///
/// Two objects may share a lock; every critical section under it is a few instructions and never calls
/// out, so sharing costs nothing that matters.
package enum StripedLocks {
    private static let count = 64

    // nonisolated(unsafe): the cells are created once, never freed, and only used through
    // `LockCell.withLock`, which synchronises.
    private nonisolated(unsafe) static let cells: UnsafeMutablePointer<LockCell> = {
        let cells = UnsafeMutablePointer<LockCell>.allocate(capacity: count)
        for index in 0..<count { LockCell.initialize(cells + index) }
        return cells
    }()

    /// Runs `body` holding the lock that `object` maps to. Never call out to user code inside.
    @inline(__always)
    package static func withLock<Result>(for object: AnyObject, _ body: () throws -> Result) rethrows -> Result {
        // Objects are at least 16-byte aligned: drop the low bits, then mix so that neighbours spread.
        let address = UInt(bitPattern: ObjectIdentifier(object)) >> 4
        let index = Int((address ^ (address >> 6) ^ (address >> 12)) % UInt(count))
        return try LockCell.withLock(cells + index, body)
    }
}
