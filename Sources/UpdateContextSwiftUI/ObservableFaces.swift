import UpdateContext

#if canImport(Observation)
import NotificationCoalescing
import Observation

/// An `@Observable` face of a ``ViewUpdatingContext``: its ``delivery`` changes once per delivery, so a
/// SwiftUI view (or any Observation client) that reads it is invalidated at most once per cycle.
///
/// Get it from ``ViewUpdatingContext/observableDelivery``; a context has one, kept while it lives.
///
/// ```swift
/// import Foundation
/// import UpdateContext
/// import UpdateContextSwiftUI
/// import Observation
///
/// let updateContext = ViewUpdatingContext()
/// if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {   // Observation's platforms (and Linux)
///     let face = updateContext.observableDelivery
///     withObservationTracking {
///         _ = face.delivery
///     } onChange: {
///         print("the next delivery is under way")
///     }
/// }
/// updateContext.setNeedsUpdate()    // any number of times, any thread: one change, at the end of the cycle
/// ```
///
/// > Important: The change is made on the main thread, inside the delivery (after the updaters
/// > registered before the face was first asked for), in a SwiftUI transaction that animates when the
/// > delivery is animated and disables animations when it is not. ``delivery`` may be read from any
/// > thread. A suspended context delivers nothing, so the face does not change.
///
/// > Note: Needs the Observation module: iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, and Linux.
/// > Below those, use `context.observableObject` (an `ObservableObject`).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public final class ObservableDelivery: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let stored = Locked(ContextDelivery.initial)
    private let feed = DeliveryFeed()

    init(_ context: ViewUpdatingContext) {
        feed.start(on: context) { [weak self] delivery in self?.announce(delivery) }
    }

    /// The last delivery (``ContextDelivery/initial`` before the first). Reading it in a tracked scope (a
    /// SwiftUI body) subscribes to the next. Any thread.
    public var delivery: ContextDelivery {
        registrar.access(self, keyPath: \.delivery)
        return stored.withLock { $0 }
    }

    private func announce(_ delivery: ContextDelivery) {
        withDeliveryTransaction(delivery) {
            registrar.withMutation(of: self, keyPath: \.delivery) {
                stored.withLock { $0 = delivery }
            }
        }
    }
}

/// An `@Observable` face of a ``StateUpdatingContext``: ``state`` is the state as its last render
/// showed it, and changes once per render (at most once per cycle; not at all in a cycle whose changes
/// cancel out).
///
/// Get it from ``StateUpdatingContext/observableState``; a context has one, kept while it lives.
///
/// > Important: The change is made on the main thread, inside the delivery, in a SwiftUI transaction
/// > that follows the delivery's animated flag. ``state`` and ``delivery`` may be read from any thread.
/// > The face starts with the state it was made with, and changes when a delivery renders a different
/// > one, or a forced delivery renders any.
///
/// > Note: Needs the Observation module (iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, Linux); below
/// > those, `stateContext.observableObject` (an `ObservableObject`).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public final class ObservableRenderedState<State: Equatable & Sendable>: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let stored: Locked<(state: State, delivery: ContextDelivery)>
    private let feed = DeliveryFeed()

    init(_ context: StateUpdatingContext<State>) {
        let initial = context.state
        stored = Locked((initial, ContextDelivery.initial))
        feed.start(rendering: context, initial: initial) { [weak self] state, delivery in
            self?.announce(state, delivery)
        }
    }

    /// The state as the last render showed it (the state at creation before the first). Any thread.
    public var state: State {
        registrar.access(self, keyPath: \.state)
        return stored.withLock { $0.state }
    }

    /// The delivery that rendered ``state`` last (``ContextDelivery/initial`` before the first). Any thread.
    public var delivery: ContextDelivery {
        registrar.access(self, keyPath: \.delivery)
        return stored.withLock { $0.delivery }
    }

    private func announce(_ state: State, _ delivery: ContextDelivery) {
        withDeliveryTransaction(delivery) {
            registrar.withMutation(of: self, keyPath: \.state) {
                registrar.withMutation(of: self, keyPath: \.delivery) {
                    stored.withLock { $0 = (state, delivery) }
                }
            }
        }
    }
}

extension ViewUpdatingContext {
    /// This context's `@Observable` face (made on first use, then the same object while the context
    /// lives). Any thread.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    public var observableDelivery: ObservableDelivery {
        face { ObservableDelivery(self) }
    }
}

extension StateUpdatingContext where State: Sendable {
    /// This context's `@Observable` face (made on first use, then the same object while the context
    /// lives). Any thread.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    public var observableState: ObservableRenderedState<State> {
        context.face { ObservableRenderedState(self) }
    }
}
#endif
