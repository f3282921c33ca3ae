/// A token for one registration: a notification observation, or an updater.
///
/// ``remove()`` detaches it. Calling it more than once, from any thread, or after the context that
/// created it is gone, is harmless.
///
/// > Important: `remove()` does not interrupt a handler call already under way on another thread;
/// > once it has returned, no new call of the handler starts.
public final class NotificationObserver: Sendable, Hashable {
    private enum State {
        case unattached
        case attached(@Sendable () -> Void)
        case removed
    }

    private let state: Locked<State>

    /// Creates a token whose first ``remove()`` runs `onRemove`.
    package init(onRemove: @escaping @Sendable () -> Void) {
        state = Locked(.attached(onRemove))
    }

    /// Creates a token whose removal is given later by ``attach(_:)`` (a handler may need its token
    /// before the registration exists).
    package init() {
        state = Locked(.unattached)
    }

    /// Gives the token its removal. If ``remove()`` was already called, `onRemove` runs at once.
    package func attach(_ onRemove: @escaping @Sendable () -> Void) {
        let removeNow = state.withLock { state -> Bool in
            if case .removed = state { return true }
            state = .attached(onRemove)
            return false
        }
        if removeNow { onRemove() }
    }

    /// Whether ``remove()`` has not been called yet.
    public var isActive: Bool {
        state.withLock {
            if case .removed = $0 { return false }
            return true
        }
    }

    /// Detaches the registration. Idempotent and thread-safe.
    public func remove() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state = .removed }
            if case .attached(let action) = state { return action }
            return nil
        }
        action?()
    }

    public static func == (lhs: NotificationObserver, rhs: NotificationObserver) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
