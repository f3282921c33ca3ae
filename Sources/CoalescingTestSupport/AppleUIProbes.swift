// What the macOS job's tests of the Combine and SwiftUI layers do, written here (outside the test target)
// so that `apple-typecheck matrix .` type-checks it against the SDKs: XCTest is not in the SDKs, so the
// test files only call these and assert on what they return. Nothing here exists on Linux.
#if canImport(Combine)
import Combine
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI

/// What ``playPublisherTrigger(values:fromAnotherThread:)`` saw.
package struct PublisherTriggerResult: Equatable, Sendable {
    /// Deliveries after the values were sent and the scheduler ran (the contract: 1).
    package var deliveriesAfterValues: Int
    /// The flags of those deliveries.
    package var flags: [Bool]
    /// Deliveries caused by values sent after `cancel()` (0).
    package var deliveriesAfterCancel: Int
    /// Whether the subscription said it was cancelled.
    package var cancelledAfterCancel: Bool
    /// Running subscriptions after cancel, after a completed publisher, and after the context went.
    package var runningAfterCancel: Int
    package var runningAfterCompletion: Int
    package var cancelledAfterContextReleased: Bool
    /// Whether the upstream saw its subscription cancelled when the context was released.
    package var upstreamCancelledByRelease: Bool
    /// Lifetimes, like `AnyCancellable`'s: whether the upstream was cancelled when the subscription itself
    /// was released (kept in a variable), and when the `Set<AnyCancellable>` it was stored in was emptied.
    package var upstreamCancelledBySubscriptionRelease: Bool
    package var upstreamCancelledBySetRelease: Bool
}

/// Plays the Combine trigger on a manual scheduler (the calling thread is the main thread's stand-in).
package func playPublisherTrigger(values: Int, fromAnotherThread: Bool) -> PublisherTriggerResult {
    let scheduler = ManualScheduler()
    var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    var flags: [Bool] = []
    context!.onUpdate { flags.append($0) }
    let subject = PassthroughSubject<Int, Never>()
    let subscription = context!.requestUpdates(from: subject, animated: true)
    if fromAnotherThread {
        let shared = ThreadSafe(subject)
        onAnotherThread { for value in 0..<values { shared.value.send(value) } }
    } else {
        for value in 0..<values { subject.send(value) }
    }
    _ = try? scheduler.runUntilIdle()
    let afterValues = flags.count
    subscription.cancel()
    subject.send(-1)
    _ = try? scheduler.runUntilIdle()
    let afterCancel = flags.count - afterValues
    let running = context!.runningSubscriptions

    let finished = PassthroughSubject<Int, Never>()
    let finishing = context!.requestUpdates(from: finished)
    finished.send(completion: .finished)
    let runningAfterCompletion = context!.runningSubscriptions
    withExtendedLifetime(finishing) {}

    var releasedCancelled = false
    var kept: UpdateSubscription? = context!.requestUpdates(
        from: PassthroughSubject<Int, Never>().handleEvents(receiveCancel: { releasedCancelled = true }))
    kept = nil
    var setCancelled = false
    var set = Set<AnyCancellable>()
    context!.requestUpdates(from: PassthroughSubject<Int, Never>().handleEvents(receiveCancel: { setCancelled = true }))
        .store(in: &set)
    let cancelledWhileInSet = setCancelled
    set.removeAll()

    var upstreamCancelled = false
    let upstream = PassthroughSubject<Int, Never>().handleEvents(receiveCancel: { upstreamCancelled = true })
    let held = context!.requestUpdates(from: upstream)
    context = nil
    return PublisherTriggerResult(
        deliveriesAfterValues: afterValues, flags: flags, deliveriesAfterCancel: afterCancel,
        cancelledAfterCancel: subscription.isCancelled, runningAfterCancel: running,
        runningAfterCompletion: runningAfterCompletion, cancelledAfterContextReleased: held.isCancelled,
        upstreamCancelledByRelease: upstreamCancelled,
        upstreamCancelledBySubscriptionRelease: releasedCancelled && kept == nil,
        upstreamCancelledBySetRelease: !cancelledWhileInSet && setCancelled)
}

/// Combine's subjects lock their own state but are not declared `Sendable`.
struct ThreadSafe<Value>: @unchecked Sendable {
    // @unchecked Sendable: only for values that synchronise themselves (Combine's subjects).
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// What ``playDeliveryFaces(timeline:defaultAnimated:)`` saw: per delivery of the timeline, what each face said.
package struct DeliveryFacesResult: Equatable, Sendable {
    /// `n`/`a` per delivery, as the updaters got them.
    package var updaters = ""
    /// `n`/`a` per `objectWillChange` of ``ViewUpdatingContext/observableObject``.
    package var objectWillChange = ""
    /// `n`/`a` per value of ``ViewUpdatingContext/deliveries``.
    package var publisher = ""
    /// The delivery numbers the publisher sent.
    package var numbers: [UInt64] = []
}

/// Plays a precedence-table timeline (`PrecedenceRow`'s tokens) and records what the Combine faces say.
package func playDeliveryFaces(timeline: String, defaultAnimated: Bool) -> DeliveryFacesResult {
    let scheduler = ManualScheduler()
    let context = ViewUpdatingContext(animated: defaultAnimated, scheduler: scheduler, refreshEvents: [])
    var result = DeliveryFacesResult()
    context.onUpdate { result.updaters += $0 ? "a" : "n" }
    let face = context.observableObject
    var pendingWillChange = 0
    let willChange = face.objectWillChange.sink { pendingWillChange += 1 }
    let deliveries = context.deliveries.sink { delivery in
        result.publisher += delivery.animated ? "a" : "n"
        result.numbers.append(delivery.number)
    }
    for token in timeline.split(separator: " ") {
        pendingWillChange = 0
        playPrecedenceToken(token, on: context, scheduler: scheduler)
        // One token delivers once at most; the face's value is read after the token.
        for _ in 0..<pendingWillChange { result.objectWillChange += face.delivery.animated ? "a" : "n" }
    }
    willChange.cancel()
    deliveries.cancel()
    return result
}

/// Whether a deliveries subscriber with a demand of `demand` gets exactly that many of 5 deliveries, and
/// none after cancelling.
package func playDeliveriesDemand(demand: Int) -> (received: Int, afterCancel: Int) {
    final class Counting: Subscriber {
        let demand: Int
        var received = 0
        var subscription: (any Subscription)?
        init(demand: Int) { self.demand = demand }
        func receive(subscription: any Subscription) {
            self.subscription = subscription
            subscription.request(.max(demand))
        }
        func receive(_ input: ContextDelivery) -> Subscribers.Demand {
            received += 1
            return .none
        }
        func receive(completion: Subscribers.Completion<Never>) {}
    }
    let scheduler = ManualScheduler()
    let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    let subscriber = Counting(demand: demand)
    context.deliveries.subscribe(subscriber)
    for _ in 0..<5 {
        context.setNeedsUpdate()
        scheduler.turn()
    }
    let received = subscriber.received
    subscriber.subscription?.cancel()
    context.update()
    return (received, subscriber.received - received)
}
#endif
