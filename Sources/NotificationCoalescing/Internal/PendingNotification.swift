import Foundation

// What the pending queue holds: a notification or a typed message waiting for its turn, and the keys it is
// found by.

/// How a pending notification's sender is compared: by identity for every class instance.
package enum SenderKey: Hashable, Sendable {
    /// No sender: matches other notifications without one, as in Foundation.
    case none
    /// A class instance (NSObject or pure Swift), compared by identity.
    case object(ObjectIdentifier)
    /// A value-type sender has no identity and matches nothing; each gets a key of its own.
    case unmatched(UInt64)

    package init(_ object: Any?, unique: () -> UInt64) {
        guard let object else {
            self = .none
            return
        }
        if type(of: object) is AnyClass {
            self = .object(ObjectIdentifier(object as AnyObject))
        } else {
            self = .unmatched(unique())
        }
    }
}

/// When a held notification may post.
package enum PendingStyle: Sendable {
    case asap
    case whenIdle
}

/// One held notification, or the place of one held typed message in the FIFO (``messageKey`` is then set,
/// and ``notification`` only stands in for it). What a turn takes out carries the message itself
/// (``message``); the queue keeps it by key, so that a newer one replaces it in place.
package struct PendingNotification {
    package let notification: Notification
    package let style: PendingStyle
    package let modes: [RunLoop.Mode]
    package let sender: SenderKey
    /// The (type, subject) of a typed message.
    package let messageKey: MessageKey?
    /// What posts the typed message, and its subject: set only in what ``PendingQueue/take(where:)`` returns.
    package var message: (post: any MessagePosting, subject: AnyObject?)?

    package init(
        notification: Notification, style: PendingStyle, modes: [RunLoop.Mode], sender: SenderKey,
        messageKey: MessageKey? = nil
    ) {
        self.notification = notification
        self.style = style
        self.modes = modes
        self.sender = sender
        self.messageKey = messageKey
    }
}

/// What a typed message coalesces under: its type and its subject, by identity (`nil`: no subject).
/// (`@usableFromInline`: the public `enqueue` of a typed message is inlined into the caller, so that the
/// message's type is known there and an enqueue makes no runtime metadata lookup.)
@usableFromInline
package struct MessageKey: Hashable, Sendable {
    package let type: ObjectIdentifier
    package let subject: ObjectIdentifier?

    @usableFromInline
    package init(type: Any.Type, subject: AnyObject?) {
        self.type = ObjectIdentifier(type)
        // Not `subject.map(ObjectIdentifier.init)`: no retain of the subject (see ``MessagePosting``).
        if let subject { self.subject = ObjectIdentifier(subject) } else { self.subject = nil }
    }
}

/// Posts one held typed message through a center with Foundation's own `post(_:subject:)`. Its
/// conformers keep the message; the queue keeps the subject, once per key (which keeps the subject's
/// identity valid while held, and spares an enqueue of a pending key a retain of it: a subject that
/// Foundation observes has a side table, where a retain costs several times more).
@usableFromInline
package protocol MessagePosting {
    /// Posts the message for `subject` (the one it was enqueued with, of its `Subject` type); called on the
    /// scheduler's thread, outside every lock of the package.
    func post(to center: NotificationCenter, subject: AnyObject?)
    /// The message's type, for diagnostics.
    var typeName: String { get }
}
