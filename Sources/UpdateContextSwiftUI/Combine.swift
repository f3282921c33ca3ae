import UpdateContext

#if canImport(Combine)
import Combine
import NotificationCoalescing

// MARK: ObservableObject faces

/// An `ObservableObject` face of a ``ViewUpdatingContext``: `objectWillChange` publishes once per
/// delivery, so a SwiftUI view that holds it with `@ObservedObject` (or `@StateObject`) is re-evaluated
/// at most once per cycle however often the context was asked.
///
/// Get it from ``ViewUpdatingContext/observableObject``; a context has one, kept while it lives.
///
/// ```swift
/// import UpdateContext
/// import UpdateContextSwiftUI
/// import SwiftUI
///
/// final class Feed {
///     let updateContext = ViewUpdatingContext()
///     private(set) var count = 0    // written at 10 kHz on another thread in a real feed
///     func tick() { count += 1; updateContext.setNeedsUpdate() }
/// }
///
/// struct CountView: View {
///     let feed: Feed
///     @ObservedObject var deliveries: DeliveryObject
///
///     init(feed: Feed) {
///         self.feed = feed
///         deliveries = feed.updateContext.observableObject
///     }
///
///     var body: some View { Text("\(feed.count)") }    // once per delivery
/// }
/// ```
///
/// > Important: `objectWillChange` publishes on the main thread, inside the delivery, in a SwiftUI
/// > transaction that animates (`Animation.default`) when the delivery is animated and disables
/// > animations when it is not; ``delivery`` changes right after. ``delivery`` may be read from any
/// > thread. A suspended context delivers nothing, so the face stays quiet.
public final class DeliveryObject: ObservableObject, @unchecked Sendable {
    // @unchecked Sendable: `objectWillChange` is Combine's `ObservableObjectPublisher`, which locks its
    // own state but is not declared `Sendable`; this class sends on it only on the main thread (inside
    // deliveries). The rest is immutable or behind a lock.

    public let objectWillChange = ObservableObjectPublisher()
    private let stored = Locked(ContextDelivery.initial)
    private let feed = DeliveryFeed()

    init(_ context: ViewUpdatingContext) {
        feed.start(on: context) { [weak self] delivery in self?.announce(delivery) }
    }

    /// The last delivery (``ContextDelivery/initial`` before the first). Any thread.
    public var delivery: ContextDelivery { stored.withLock { $0 } }

    private func announce(_ delivery: ContextDelivery) {
        withDeliveryTransaction(delivery) {
            objectWillChange.send()
            stored.withLock { $0 = delivery }
        }
    }
}

/// An `ObservableObject` face of a ``StateUpdatingContext``: ``state`` is the state as its last render
/// showed it; `objectWillChange` publishes once per render (at most once per cycle; not at all in a cycle
/// whose changes cancel out).
///
/// Get it from ``StateUpdatingContext/observableObject``; a context has one, kept while it lives.
///
/// > Important: `objectWillChange` publishes on the main thread, inside the delivery, in a SwiftUI
/// > transaction that follows the delivery's animated flag. ``state`` and ``delivery`` may be read from
/// > any thread. The face starts with the state it was made with.
public final class RenderedStateObject<State: Equatable & Sendable>: ObservableObject, @unchecked Sendable {
    // @unchecked Sendable: as for `DeliveryObject` (Combine's publisher, sent on only on the main thread).

    public let objectWillChange = ObservableObjectPublisher()
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
    public var state: State { stored.withLock { $0.state } }

    /// The delivery that rendered ``state`` last (``ContextDelivery/initial`` before the first). Any thread.
    public var delivery: ContextDelivery { stored.withLock { $0.delivery } }

    private func announce(_ state: State, _ delivery: ContextDelivery) {
        withDeliveryTransaction(delivery) {
            objectWillChange.send()
            stored.withLock { $0 = (state, delivery) }
        }
    }
}

extension ViewUpdatingContext {
    /// This context's `ObservableObject` face (made on first use, then the same object while the
    /// context lives). Any thread.
    public var observableObject: DeliveryObject {
        face { DeliveryObject(self) }
    }
}

extension StateUpdatingContext where State: Sendable {
    /// This context's `ObservableObject` face (made on first use, then the same object while the
    /// context lives). Any thread.
    public var observableObject: RenderedStateObject<State> {
        context.face { RenderedStateObject(self) }
    }
}

// MARK: Publisher → requests

extension ViewUpdatingContext {
    /// Requests an update every time `publisher` emits.
    ///
    /// The values are ignored: each is an event that makes the view out of date. Requests coalesce like
    /// any other, and arrive on the main thread in the common run-loop modes, so they are delivered while
    /// a scroll view tracks too. Emit from any thread; do not add `receive(on: RunLoop.main)`, which
    /// delivers in the default mode only and holds every value back while the user scrolls.
    ///
    /// ```swift
    /// import UpdateContext
    /// import UpdateContextSwiftUI
    /// import Combine
    ///
    /// final class Model { @Published var title = "" }
    ///
    /// let model = Model()
    /// let updateContext = ViewUpdatingContext()
    /// var subscriptions = Set<AnyCancellable>()
    /// updateContext.requestUpdates(from: model.$title.dropFirst(), animated: true).store(in: &subscriptions)
    /// model.title = "Ada"    // one animated update at the end of the cycle
    /// ```
    ///
    /// - Parameters:
    ///   - publisher: What to follow. It is subscribed to at once, with unlimited demand.
    ///   - animated: The flag of each request.
    /// - Returns: The subscription: ``UpdateSubscription/cancel()`` or releasing it cancels the publisher's
    ///   subscription, as with `AnyCancellable` (keep it in a property, or `store(in:)` a set). It also ends
    ///   when the publisher completes (or fails) and when this context is released. Any thread.
    ///
    /// > Note: From iOS 15 / macOS 12, `publisher.values` feeds ``requestUpdates(from:animated:)-(S,_)``
    /// > (the `AsyncSequence` form) the same way.
    public func requestUpdates<P: Publisher>(from publisher: P, animated: Bool? = nil) -> UpdateSubscription {
        subscribe(to: publisher, animated: animated)
    }

    private func subscribe<P: Publisher>(to publisher: P, animated: Bool?) -> UpdateSubscription {
        let storage = self.storage
        let key = storage.subscriptions.reserveKey()
        let trigger = PublisherTrigger<P.Output, P.Failure>(storage: storage, key: key, animated: animated)
        storage.subscriptions.register(trigger, key: key)
        publisher.subscribe(trigger)
        return UpdateSubscription(runner: trigger, storage: storage)
    }
}

/// The subscriber behind ``ViewUpdatingContext/requestUpdates(from:animated:)-(P,_)`` for publishers.
// @unchecked Sendable: the subscription and the flags are behind `state`'s lock; `storage`, `key` and
// `animated` never change.
private final class PublisherTrigger<Input, Failure: Error>: Subscriber, LinkedRunner, @unchecked Sendable {
    private struct State {
        var subscription: (any Subscription)?
        var isCancelled = false
        var isFinished = false
        /// Whether the storage has been told this trigger ended (once, whichever way it ended).
        var reported = false
    }

    let combineIdentifier = CombineIdentifier()
    private let storage: UpdateStorage
    private let key: UInt64
    private let animated: Bool?
    private let state = Locked(State())

    init(storage: UpdateStorage, key: UInt64, animated: Bool?) {
        self.storage = storage
        self.key = key
        self.animated = animated
    }

    func receive(subscription: any Subscription) {
        let accepted = state.withLock { state -> Bool in
            guard !state.isCancelled, !state.isFinished, state.subscription == nil else { return false }
            state.subscription = subscription
            return true
        }
        // Outside the lock: a publisher may emit from inside `request`.
        if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        if !state.withLock({ $0.isCancelled || $0.isFinished }) {
            storage.setNeedsUpdateFromOutside(
                animated, site: RequestSite(.named("a value of a publisher passed to requestUpdates(from:)")))
        }
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        let report = state.withLock { state -> Bool in
            state.isFinished = true
            state.subscription = nil
            defer { state.reported = true }
            return !state.reported
        }
        if report { storage.subscriptionFinished(key) }
    }

    func cancel() {
        let (subscription, report) = state.withLock { state -> ((any Subscription)?, Bool) in
            state.isCancelled = true
            defer {
                state.subscription = nil
                state.reported = true
            }
            return (state.subscription, !state.reported)
        }
        subscription?.cancel()
        if report { storage.subscriptionFinished(key) }
    }

    var isCancelled: Bool { state.withLock { $0.isCancelled } }
}

extension UpdateSubscription: Cancellable {
    /// Cancels this subscription when the set's `AnyCancellable` is released, Combine's way.
    public func store(in set: inout Set<AnyCancellable>) {
        AnyCancellable(self).store(in: &set)
    }
}

// MARK: Deliveries → publisher

extension ViewUpdatingContext {
    /// A publisher of this context's deliveries, for Combine code that reacts to them.
    ///
    /// Each subscriber gets every delivery made while it is subscribed and has demand (a delivery that
    /// finds no demand is dropped for that subscriber), on the main thread, inside the delivery, after
    /// the updaters registered before it subscribed. It never completes; it ends when cancelled. A
    /// released context delivers nothing more.
    public var deliveries: Deliveries { Deliveries(context: self) }

    /// The publisher of ``ViewUpdatingContext/deliveries``.
    public struct Deliveries: Publisher, Sendable {
        public typealias Output = ContextDelivery
        public typealias Failure = Never

        let context: ViewUpdatingContext

        public func receive<S: Subscriber>(subscriber: S) where S.Input == ContextDelivery, S.Failure == Never {
            let subscription = DeliveriesSubscription(subscriber: subscriber)
            subscriber.receive(subscription: subscription)
            subscription.start(on: context)
        }
    }
}

// @unchecked Sendable: the subscriber and the demand are behind `state`'s lock; the subscriber is called
// on the main thread only (inside deliveries), outside the lock.
private final class DeliveriesSubscription<S: Subscriber>: Subscription, @unchecked Sendable
where S.Input == ContextDelivery, S.Failure == Never {
    private struct State {
        var subscriber: S?
        var demand = Subscribers.Demand.none
    }

    private let state: Locked<State>
    private let feed = DeliveryFeed()

    init(subscriber: S) {
        state = Locked(State(subscriber: subscriber))
    }

    func start(on context: ViewUpdatingContext) {
        guard state.withLock({ $0.subscriber != nil }) else { return }
        feed.start(on: context) { [weak self] delivery in self?.deliver(delivery) }
    }

    func request(_ demand: Subscribers.Demand) {
        state.withLock { $0.demand += demand }
    }

    func cancel() {
        let subscriber = state.withLock { state -> S? in
            defer { state.subscriber = nil }
            return state.subscriber
        }
        feed.stop()
        _ = subscriber  // released outside the lock
    }

    private func deliver(_ delivery: ContextDelivery) {
        let subscriber = state.withLock { state -> S? in
            guard state.demand > 0 else { return nil }
            state.demand -= 1
            return state.subscriber
        }
        guard let subscriber else { return }
        let more = subscriber.receive(delivery)
        if more > 0 { state.withLock { $0.demand += more } }
    }
}
#endif
