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
        let call = HandlerBox(handler)
        let registration = center.addObserver(forName: name, object: object, queue: nil) { note in
            call.handler(token, note)
        }
        let held = RegistrationBox(registration)
        tokens.withLock { _ = $0.insert(token) }
        token.attach { [weak self, center] in
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

    package func removeAll() {
        let all = tokens.withLock { tokens -> Set<NotificationObserver> in
            defer { tokens.removeAll() }
            return tokens
        }
        for token in all { token.remove() }
    }
}

/// Carries a plain (non-`@Sendable`) handler into `NotificationCenter`'s `@Sendable` block.
private struct HandlerBox: @unchecked Sendable {
    // @unchecked Sendable: the contract of the observing APIs is that a handler runs on the thread that
    // posts; the box only moves the closure into the center and never calls it anywhere else. A
    // coalescing context posts only on its owner's thread, so its handlers stay on one thread.
    let handler: (NotificationObserver, Notification) -> Void
    init(_ handler: @escaping (NotificationObserver, Notification) -> Void) { self.handler = handler }
}

/// Carries the center's opaque registration object into the token's `@Sendable` removal closure.
private struct RegistrationBox: @unchecked Sendable {
    // @unchecked Sendable: the object is never read or mutated by us, only handed back to
    // `NotificationCenter.removeObserver(_:)`, which is thread-safe.
    let registration: any NSObjectProtocol
    init(_ registration: any NSObjectProtocol) { self.registration = registration }
}
