import Foundation

/// Owns a set of notification observations for the lifetime of its owner.
///
/// Keep the context in a property of the object that observes; when the owner goes, the context
/// goes, and `deinit` removes every registration it made. No `removeObserver` bookkeeping is needed.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// final class Player {
///     private let notifications = NotificationObservingContext()
///     init() {
///         notifications.observe(.applicationWillEnterForeground) { [weak self] _, _ in self?.resume() }
///     }
///     func resume() {}
/// }
/// ```
///
/// > Important: A handler runs synchronously on the thread that posts the notification. The context
/// > itself is `Sendable`: `observe` and `removeObservers()` may be called from any thread.
public final class NotificationObservingContext: Sendable {
    private let registry: ObserverRegistry

    /// What diagnostics call it (see ``label``).
    private let diagnosticLabel: DiagnosticLabel

    /// The center this context observes.
    public var center: NotificationCenter { registry.center }

    /// What diagnostics call this context: the label given to the initialiser, or where it was created
    /// (`MyModule/File.swift:12`, the `#fileID`). Any thread.
    public var label: String { diagnosticLabel.string }

    /// Creates a context observing `center`: the seed's initialiser, kept for references to it by name
    /// (`NotificationObservingContext.init(center:)`). A call such as
    /// `NotificationObservingContext(center: center)` uses ``init(label:center:file:line:)``, whose default
    /// label is the call site; this one's is "NotificationObservingContext".
    @_disfavoredOverload
    public convenience init(center: NotificationCenter = .default) {
        self.init(label: "NotificationObservingContext", center: center)
    }

    /// Creates a context observing `center`.
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`.
    ///   - center: The center to observe.
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public init(
        label: String? = nil, center: NotificationCenter = .default, file: StaticString = #fileID, line: UInt = #line
    ) {
        diagnosticLabel = DiagnosticLabel(label, file: file, line: line)
        registry = ObserverRegistry(center: center)
    }

    deinit {
        registry.removeAll()
        diagnosticLabel.release()
    }

    /// Observes notifications named `name`, optionally only those sent by `object` (by identity).
    ///
    /// - Parameters:
    ///   - name: The name to observe.
    ///   - object: The sender to filter on, compared by identity; `nil` observes every sender.
    ///   - handler: Called on the posting thread with this registration's token and the notification.
    /// - Returns: The token; ``NotificationObserver/remove()`` ends this one observation.
    @discardableResult
    public func observe(
        _ name: Notification.Name,
        object: AnyObject? = nil,
        _ handler: @escaping (NotificationObserver, Notification) -> Void
    ) -> NotificationObserver {
        registry.observe(name, object: object, handler)
    }

    /// Observes a typed notification; the handler gets the value back.
    ///
    /// ```swift
    /// import Foundation
    /// import NotificationCoalescing
    ///
    /// struct ScoreChanged: ObservableNotification { var score: Int }
    ///
    /// let context = NotificationObservingContext()
    /// context.observe { (_, note: ScoreChanged) in print(note.score) }
    /// ```
    @discardableResult
    public func observe<N: ObservableNotification>(
        _ type: N.Type = N.self,
        object: AnyObject? = nil,
        _ handler: @escaping (NotificationObserver, N) -> Void
    ) -> NotificationObserver {
        registry.observe(type, object: object, handler)
    }

    /// The registrations of the `observe` methods (the typed-message forms live in another file).
    var observerRegistry: ObserverRegistry { registry }

    /// Removes every observation this context made. The context stays usable.
    public func removeObservers() {
        registry.removeAll()
    }

    /// How many observations are active.
    public var observerCount: Int { registry.count }
}

extension NotificationObservingContext: CustomDebugStringConvertible {
    /// The label, the center's type and how many observers are registered. Any thread.
    public var debugDescription: String {
        "NotificationObservingContext \"\(label)\": \(observerCount) observer\(observerCount == 1 ? "" : "s") on "
            + "\(center === NotificationCenter.default ? "the default center" : "its own center")"
    }
}
