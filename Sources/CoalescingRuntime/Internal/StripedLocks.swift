import CCoalescingSupport

/// A fixed set of locks shared by many small objects, chosen by the object's address: an object that
/// needs a lock only for rare transitions (a token being removed) then needs no lock of its own — a
/// `pthread_mutex_t` is 40 bytes on Linux, more than such an object's whole state.
///
/// Two objects may share a lock; every critical section under it is a few instructions and never calls
/// out, so sharing costs nothing that matters.
@usableFromInline
package enum StripedLocks: Sendable {  // (stated: a @usableFromInline type is not inferred Sendable)
    /// Runs `body` holding the lock for `object` (one of CCoalescingSupport's `cvu_stripes`). Inlinable, so
    /// that callers in other modules (the contexts' storage) take the lock without a call.
    @inlinable @inline(__always)
    package static func withLock<Result>(for object: AnyObject, _ body: () throws -> Result) rethrows -> Result {
        let index = stripe(for: object)
        cvu_stripe_lock(index)
        defer { cvu_stripe_unlock(index) }
        return try body()
    }

    /// The stripe that guards `object`.
    @inlinable @inline(__always)
    static func stripe(for object: AnyObject) -> CUnsignedInt {
        let address = UInt(bitPattern: ObjectIdentifier(object)) >> 4
        return CUnsignedInt(truncatingIfNeeded: address ^ (address >> 6) ^ (address >> 12))
    }
}
