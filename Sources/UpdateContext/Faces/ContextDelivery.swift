import CoalescingRuntime
import UpdateContextCore

/// One delivery of a ``ViewUpdatingContext``, as its observable faces and its deliveries publisher
/// announce it.
public struct ContextDelivery: Hashable, Sendable, CustomStringConvertible {
    /// The context's count of deliveries: 1 for the first, one more for each (0 before the first).
    public let number: UInt64
    /// The delivery's animated flag (what every updater of it got).
    public let animated: Bool
    /// Whether it was forced (`update()`, a lifecycle refresh), rendering even what has not changed, rather
    /// than delivering what was requested (the end of a cycle, `updateIfNeeded()`, an early flush).
    public let isForced: Bool

    /// The delivery's animation (its transaction's; the default one for an animated delivery whose
    /// requests carried none), `nil` when not animated.
    public let animation: UpdateAnimation?

    /// Creates a delivery description (the faces make them; tests and previews may too).
    public init(number: UInt64, animated: Bool, isForced: Bool, animation: UpdateAnimation? = nil) {
        self.number = number
        self.animated = animated
        self.isForced = isForced
        self.animation = animated ? (animation ?? .default) : nil
    }

    /// What a face holds before the context's first delivery (number 0).
    public static let initial = ContextDelivery(number: 0, animated: false, isForced: false)

    public var description: String {
        number == 0
            ? "no delivery"
            : "delivery \(number) (\(animated ? "animated" : "not animated")\(isForced ? ", forced" : ""))"
    }
}

/// One updater on a context that tells a face about each delivery: what every observable face and the
/// deliveries publisher are built on, on every platform.
///
/// The face's `announce` runs on the main thread, inside the delivery, once per delivery (per render for a
/// state context), after the updaters registered before it (updaters run in registration order). The feed
/// removes its updater when it is released or ``stop()``ped.
package final class DeliveryFeed: Sendable {
    private let token = Locked<ViewUpdatingContext.ViewUpdater?>(nil)

    package init() {}

    /// Starts announcing the deliveries of `context` (once; the face calls it at the end of its init).
    ///
    /// - Parameter announce: Called with each delivery. The context holds it until the feed stops:
    ///   capture the face weakly.
    package func start(on context: ViewUpdatingContext, _ announce: @escaping (ContextDelivery) -> Void) {
        let storage = context.storage
        // The closure holds the storage, not the context: the context's release must stay possible.
        let token = context.onUpdate { [storage] animated in
            announce(storage.deliveryUnderWay(animated: animated, isForced: storage.isForcedDelivery))
        }
        self.token.withLock { $0 = token }
    }

    /// Holds `token` (an updater the feed's owner added) until ``stop()``.
    package func hold(_ token: ViewUpdatingContext.ViewUpdater) {
        self.token.withLock { $0 = token }
    }

    /// Stops announcing (idempotent, any thread: removal's rules, see ``ViewUpdatingContext/onUpdate(_:)``).
    package func stop() {
        token.withLock { $0 }?.remove()
    }

    deinit {
        stop()
    }
}

extension ViewUpdatingContext {
    /// The face of type `Face` of this context: made once by `make`, kept while the context lives.
    ///
    /// `make` runs outside every lock (it registers an updater); when two threads race, one face wins and
    /// the other is released (its feed removes its updater). A released context makes a face that is not
    /// kept (it announces nothing).
    package func face<Face: AnyObject & Sendable>(_ make: () -> Face) -> Face {
        let storage = self.storage
        if let face = storage.face(Face.self) { return face }
        return storage.adopt(make())
    }
}

extension UpdateStorage {
    /// The delivery under way (main thread, inside its updaters), as the faces and renders describe it:
    /// its number, flag, whether it is forced, and its transaction's animation.
    package func deliveryUnderWay(animated: Bool, isForced: Bool) -> ContextDelivery {
        ContextDelivery(
            number: deliverySerial, animated: animated, isForced: isForced,
            animation: animated ? deliveryTransaction(animated: true).animation : nil)
    }
}
