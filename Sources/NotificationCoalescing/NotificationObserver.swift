/// A token for one notification observation (a context's updaters have their own token,
/// `ViewUpdatingContext.ViewUpdater`, with the same removal rules).
///
/// ``remove()`` detaches it. Calling it more than once, from any thread, or after the context that
/// created it is gone, is harmless.
///
/// Removal is final, and exactly this holds:
///
/// - On the thread that runs the handler (the posting thread), including from inside a handler: once
///   `remove()` has returned, the handler is never called again — not even later in the post under way —
///   and what it captured is released.
/// - From another thread: once `remove()` has returned, no call of the handler begins. A call begins when
///   the posting thread claims the handler, atomically with respect to the removal, just before calling
///   it: a call claimed before `remove()` took effect may still be running, or be about to run its first
///   line, and finishes normally; one not claimed by then is never made. What the handler captured is
///   released when that call returns (or at once, when none was under way).
///
/// > Important: `remove()` never waits for a handler call under way on another thread. A handler that
/// > itself waits for the thread that removes it (a semaphore, `DispatchQueue.sync`) therefore cannot
/// > deadlock with the removal. To be sure that no call is running any more, remove on the thread that
/// > runs the handler.
public final class NotificationObserver: Sendable, Hashable {
    private enum State {
        case unattached
        /// The removal.
        case attached(@Sendable () -> Void)
        case removed
    }

    // nonisolated(unsafe): read and written only under the object's striped lock (`StripedLocks`), which
    // saves every token a lock of its own.
    private nonisolated(unsafe) var state: State

    /// Creates a token whose removal is given later by ``attach(_:)`` (a handler may need its token
    /// before the registration exists).
    package init() {
        state = .unattached
    }

    /// Gives the token its removal. If ``remove()`` was already called, `onRemove` runs at once.
    package func attach(_ onRemove: @escaping @Sendable () -> Void) {
        let removeNow = StripedLocks.withLock(for: self) { () -> Bool in
            if case .removed = state { return true }
            state = .attached(onRemove)
            return false
        }
        if removeNow { onRemove() }
    }

    /// Whether ``remove()`` has not been called yet.
    public var isActive: Bool {
        StripedLocks.withLock(for: self) {
            if case .removed = state { return false }
            return true
        }
    }

    /// Detaches the registration. Idempotent and thread-safe; never waits (see the type's discussion).
    public func remove() {
        let previous = StripedLocks.withLock(for: self) { () -> State in
            defer { state = .removed }
            return state
        }
        // Outside the lock: removal may release captures, whose deinit may run any code.
        switch previous {
        case .attached(let action): action()
        case .unattached, .removed: break
        }
    }

    public static func == (lhs: NotificationObserver, rhs: NotificationObserver) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
