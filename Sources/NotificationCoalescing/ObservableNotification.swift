import Foundation

/// A value that travels as a notification and comes back typed to its observers.
///
/// A conforming type needs no members. Its ``name`` defaults to one derived from the type's fully
/// qualified name, and the value itself rides in the notification's `userInfo`, so an observer gets the
/// same value back:
///
/// ```swift
/// import Foundation
/// import NotificationCoalescing
///
/// struct ScoreChanged: ObservableNotification { var score: Int }
///
/// let context = NotificationObservingContext()
/// context.observe { (_, note: ScoreChanged) in print(note.score) }
/// NotificationCenter.default.post(ScoreChanged(score: 3))
/// ```
///
/// A notification of the same name that carries no value of this type (posted by someone else with
/// the plain `Notification` API) is ignored by typed observers.
public protocol ObservableNotification {
    /// The name the value travels under. Defaults to one derived from the type.
    static var name: Notification.Name { get }
}

extension ObservableNotification {
    public static var name: Notification.Name {
        Notification.Name("ObservableNotification." + String(reflecting: Self.self))
    }

    /// Wraps the value in a `Notification` that observers of `Self` can read back.
    ///
    /// - Parameter object: The sender, matched by identity by observers that filter on an object.
    public func notification(object: AnyObject? = nil) -> Notification {
        Notification(name: Self.name, object: object, userInfo: [ObservableNotificationKey.value: self])
    }

    /// Reads a value of this type back from a notification, or `nil` when it carries none.
    public init?(_ notification: Notification) {
        guard notification.name == Self.name,
            let value = notification.userInfo?[ObservableNotificationKey.value] as? Self
        else { return nil }
        self = value
    }
}

/// The `userInfo` key under which a typed value travels.
enum ObservableNotificationKey {
    static let value = "NotificationCoalescing.ObservableNotification.value"
}

extension NotificationCenter {
    /// Posts a typed notification synchronously on the calling thread.
    ///
    /// Observers run on the calling thread before this returns.
    public func post<N: ObservableNotification>(_ value: N, object: AnyObject? = nil) {
        post(value.notification(object: object))
    }
}
