import Foundation

/// The registrations one context owns on one `NotificationCenter`; removes them all on request.
package final class ObserverRegistry: Sendable {
    package let center: NotificationCenter
    private let tokens = Locked<Set<NotificationObserver>>([])

    package init(center: NotificationCenter) {
        self.center = center
    }

    /// Registers `handler` for `name` (and `object`, by identity) and returns its token.
    package func observe(
        _ name: Notification.Name?,
        object: AnyObject?,
        _ handler: @escaping (NotificationObserver, Notification) -> Void
    ) -> NotificationObserver {
        let token = NotificationObserver()
        let box = HandlerBox(handler)
        let registration = center.addObserver(forName: name, object: object, queue: nil) { note in
            box.call(token, note)
        }
        let held = RegistrationBox(registration)
        tokens.withLock { _ = $0.insert(token) }
        token.attach { [weak self, center] in
            // First the handler: a post under way (the center calls a snapshot of its observers) must not
            // call it after this, and what it captured goes now, not when the center lets the block go.
            box.clear()
            center.removeObserver(held.registration)
            self?.tokens.withLock { _ = $0.remove(token) }
        }
        return token
    }

    /// The typed form: decodes the value and skips notifications of the name that carry none.
    package func observe<N: ObservableNotification>(
        _ type: N.Type,
        object: AnyObject?,
        _ handler: @escaping (NotificationObserver, N) -> Void
    ) -> NotificationObserver {
        observe(N.name, object: object) { token, note in
            guard let value = N(note) else { return }
            handler(token, value)
        }
    }

    package var count: Int {
        tokens.withLock { $0.count }
    }

    #if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))
    /// Registers `handler` for the main-actor message `type` (from `subject`, or from any subject when
    /// `nil`) with Foundation's `addObserver(of:for:using:)`, and returns its token.
    @available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    package func observe<M: NotificationCenter.MainActorMessage>(
        _ type: M.Type, subject: M.Subject?, _ handler: @escaping @MainActor (M) -> Void
    ) -> NotificationObserver where M.Subject: AnyObject {
        let box = ClaimableHandler(handler)
        let registration = center.addObserver(of: subject, for: type) { message in
            guard let claimed = box.claim() else { return }
            claimed(message)
        }
        return track(registration, clearing: box.clear)
    }

    /// Registers `handler` for the async message `type` (from `subject`, or from any subject when `nil`):
    /// Foundation calls it on a task of its own, after the post.
    @available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    package func observe<M: NotificationCenter.AsyncMessage>(
        _ type: M.Type, subject: M.Subject?, _ handler: @escaping @Sendable (M) -> Void
    ) -> NotificationObserver where M.Subject: AnyObject {
        let box = ClaimableHandler(handler)
        let registration = center.addObserver(of: subject, for: type) { message in
            guard let claimed = box.claim() else { return }
            claimed(message)
        }
        return track(registration, clearing: box.clear)
    }

    /// A token for a message registration: its removal first drops the handler (`clear`), then removes the
    /// registration from the center.
    @available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    private func track(
        _ registration: NotificationCenter.ObservationToken, clearing clear: @escaping @Sendable () -> Void
    ) -> NotificationObserver {
        let token = NotificationObserver()
        tokens.withLock { _ = $0.insert(token) }
        token.attach { [weak self, center] in
            clear()
            center.removeObserver(registration)
            self?.tokens.withLock { _ = $0.remove(token) }
        }
        return token
    }
    #endif

    package func removeAll() {
        let all = tokens.withLock { tokens -> Set<NotificationObserver> in
            defer { tokens.removeAll() }
            return tokens
        }
        for token in all { token.remove() }
    }
}

/// Carries a plain (non-`@Sendable`) handler into `NotificationCenter`'s `@Sendable` block, and lets
/// removal take it back: once ``clear()`` has returned, ``call(_:_:)`` never starts the handler again (a call
/// claimed before it may still be running, and finishes).
///
/// The handler is a stored property of this (non-generic) class, read and written under the box's
/// striped lock. Not a `Locked<Handler?>`: a closure read back through a generic container is
/// re-abstracted on every access, and a read-modify-write wraps it in one more thunk each time, so the
/// call got a little deeper and slower with every post, until the stack overflowed.
private final class HandlerBox: @unchecked Sendable {
    // @unchecked Sendable: `handler` is read and written only under the striped lock for `self`. The
    // handler (not `Sendable`) is handed to the posting thread, which is where the observing APIs promise
    // it runs.
    private var handler: ((NotificationObserver, Notification) -> Void)?

    init(_ handler: @escaping (NotificationObserver, Notification) -> Void) {
        // Written under the lock, not by the initialiser: the first post may come from another thread,
        // and the lock is the hand-off that ThreadSanitizer sees (NotificationCenter's own is invisible).
        StripedLocks.withLock(for: self) { self.handler = handler }
    }

    /// Calls the handler, outside the lock, unless it was removed.
    ///
    /// The handler runs on the posting thread: that is the contract of the observing APIs. A coalescing
    /// context posts only on its owner's thread, so its handlers stay on one thread.
    /// The claim — taking the handler, under the lock — is where a call begins: a removal that takes the
    /// lock later never sees this call missed, and one that took it earlier left nothing to claim.
    func call(_ token: NotificationObserver, _ note: Notification) {
        let claimed = StripedLocks.withLock(for: self) { handler }
        claimed?(token, note)
    }

    /// Drops the handler (and what it captured, released here, outside the lock, or when a call under way
    /// returns).
    func clear() {
        let dropped = StripedLocks.withLock(for: self) { () -> ((NotificationObserver, Notification) -> Void)? in
            defer { handler = nil }
            return handler
        }
        _ = dropped
    }
}

/// A handler that removal can take back, for any handler type (the typed-message observers): once
/// ``clear()`` has returned, ``claim()`` never hands the handler out again (a call claimed before it may still
/// be running, and finishes). The handler is only ever read whole, never modified in place
/// (see ``HandlerBox`` on why that matters for closures in generic storage).
final class ClaimableHandler<Handler>: @unchecked Sendable {
    // @unchecked Sendable: `handler` is read and written only under the striped lock
    // for `self`. The handler is handed to the thread that posts (a main-actor message's handler is only
    // ever claimed on the main actor, by Foundation's observer block).
    private var handler: Handler?

    init(_ handler: Handler) {
        // Under the lock: the first call may come from another thread (see `HandlerBox.init`).
        StripedLocks.withLock(for: self) { self.handler = handler }
    }

    /// The handler, for one call; `nil` once removed.
    func claim() -> Handler? {
        StripedLocks.withLock(for: self) { handler }
    }

    /// Drops the handler (released here, outside the lock, or when a call under way returns).
    @Sendable func clear() {
        let dropped = StripedLocks.withLock(for: self) { () -> Handler? in
            defer { handler = nil }
            return handler
        }
        _ = dropped
    }
}

/// Carries the center's opaque registration object into the token's `@Sendable` removal closure.
private struct RegistrationBox: @unchecked Sendable {
    // @unchecked Sendable: the object is never read or mutated by us, only handed back to
    // `NotificationCenter.removeObserver(_:)`, which is thread-safe.
    let registration: any NSObjectProtocol
    init(_ registration: any NSObjectProtocol) { self.registration = registration }
}
