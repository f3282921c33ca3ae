/// A token for one registration: a notification observation, or an updater.
///
/// ``remove()`` detaches it. Calling it more than once, from any thread, or after the context that
/// created it is gone, is harmless.
///
/// Removal is final, and exactly this holds:
///
/// - On the thread that runs the handler (the main thread for updaters, the posting thread for
///   observers), including from inside a handler: once `remove()` has returned, the handler is never
///   called again — not even later in the post or delivery under way — and what it captured is released.
/// - From another thread: once `remove()` has returned, no call of the handler begins. A call begins
///   when the delivering (or posting) thread claims the handler, atomically with respect to the removal,
///   just before calling it: a call claimed before `remove()` took effect — for updaters at most one —
///   may still be running, or be about to run its first line, and finishes normally; one not claimed by
///   then is never made. What the handler captured is released when that call returns (or at once, when
///   none was under way).
///
/// > Important: `remove()` never waits for a handler call under way on another thread. A handler that
/// > itself waits for the thread that removes it (a semaphore, `DispatchQueue.sync`) therefore cannot
/// > deadlock with the removal. To be sure that no call is running any more, remove on the thread that
/// > runs the handler (for updaters, the main thread).
public final class NotificationObserver: Sendable, Hashable {
    private enum State {
        case unattached
        /// The removal.
        case attached(@Sendable () -> Void)
        case target(any RegistrationTarget, UInt64)
        case removed
    }

    // nonisolated(unsafe): read and written only under the object's striped lock (`StripedLocks`), which
    // saves every token a lock of its own (most contexts hold one token per updater).
    private nonisolated(unsafe) var state: State

    /// Creates a token whose first ``remove()`` calls `target.removeRegistration(id)`: no closure to
    /// allocate, for registrations made by the thousand.
    package init(target: any RegistrationTarget, id: UInt64) {
        state = .target(target, id)
    }

    /// Creates a token whose removal is given later by ``attach(_:)`` (a handler may need its token
    /// before the registration exists).
    package init() {
        state = .unattached
    }

    /// Gives the token its removal, which returns whether a call of the handler was under way. If
    /// ``remove()`` was already called, `onRemove` runs at once.
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
        case .target(let target, let id): target.removeRegistration(id)
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

/// What a token removes a registration from, by id. Called from any thread: it synchronises itself (not
/// `Sendable` by requirement, so that a `ManagedBuffer` subclass can be one).
package protocol RegistrationTarget: AnyObject {
    /// Removes registration `id`; called at most once per id, on any thread.
    func removeRegistration(_ id: UInt64)
}
