// What the macOS job's tests of the Combine and SwiftUI layers do, written here (outside the test target)
// so that `apple-typecheck matrix .` type-checks it against the SDKs: XCTest is not in the SDKs, so the
// test files only call these and assert on what they return. Nothing here exists on Linux.
#if canImport(Combine)
import Combine
import Foundation
import NotificationCoalescing
import UpdateContext

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
}

/// Plays the Combine trigger on a manual scheduler (the calling thread is the main thread's stand-in).
package func playPublisherTrigger(values: Int, fromAnotherThread: Bool) -> PublisherTriggerResult {
    let scheduler = ManualScheduler()
    var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
    var flags: [Bool] = []
    context!.onUpdate { flags.append($0) }
    let subject = PassthroughSubject<Int, Never>()
    let subscription = context!.setNeedsUpdate(on: subject, animated: true)
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
    context!.setNeedsUpdate(on: finished)
    finished.send(completion: .finished)
    let runningAfterCompletion = context!.runningSubscriptions

    var upstreamCancelled = false
    let upstream = PassthroughSubject<Int, Never>().handleEvents(receiveCancel: { upstreamCancelled = true })
    let held = context!.setNeedsUpdate(on: upstream)
    context = nil
    return PublisherTriggerResult(
        deliveriesAfterValues: afterValues, flags: flags, deliveriesAfterCancel: afterCancel,
        cancelledAfterCancel: subscription.isCancelled, runningAfterCancel: running,
        runningAfterCompletion: runningAfterCompletion, cancelledAfterContextReleased: held.isCancelled,
        upstreamCancelledByRelease: upstreamCancelled)
}

/// Combine's subjects lock their own state but are not declared `Sendable`.
private struct ThreadSafe<Value>: @unchecked Sendable {
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

#if canImport(SwiftUI) && canImport(AppKit) && canImport(Combine)
import AppKit
import SwiftUI

/// Hosts a gated view in an `NSHostingView` and plays a `GateRow` timeline on it with SwiftUI itself:
/// each content evaluation is written as the row writes it.
@MainActor
package final class GateHostProbe {
    /// What the parent's evaluations hand the gated view.
    final class Driver: ObservableObject {
        @Published var version = 0
        @Published var key = 0
        @Published var flag = false
    }

    /// State the gated content observes itself (a change re-evaluates it, gate or not).
    final class Own: ObservableObject {
        @Published var ticks = 0
    }

    /// The evaluations written so far.
    final class Log {
        var entries: [String] = []
    }

    struct Content: View {
        let version: Int
        @ObservedObject var own: Own
        let log: Log
        var body: some View {
            log.entries.append("*\(version)")
            return Text("\(version) \(own.ticks)")
        }
    }

    struct Parent: View {
        let kind: GateKind
        @ObservedObject var driver: Driver
        let own: Own
        let events: PassthroughSubject<Void, Never>
        let log: Log
        var body: some View {
            let content = Content(version: driver.version, own: own, log: log)
            switch kind {
            case .onChange: content.updatesOnly(onChangeOf: driver.key)
            case .whileOpen: content.updatesOnly(while: driver.flag)
            case .onEvent: content.updatesOnly(onReceive: events)
            }
        }
    }

    private let kind: GateKind
    private let driver = Driver()
    private let own = Own()
    private let events = PassthroughSubject<Void, Never>()
    private let log = Log()
    private var window: NSWindow?
    private var host: NSHostingView<Parent>?

    package init(kind: GateKind) {
        self.kind = kind
    }

    /// Plays `timeline` (it starts with a `p`: the view appears with the inputs of that evaluation);
    /// returns, per token, the content evaluations it caused (each version once, in order: SwiftUI may
    /// evaluate a body twice for one update).
    package func play(_ timeline: String) -> String {
        var out: [String] = []
        for token in timeline.split(separator: " ") {
            let before = log.entries.count
            let argument = token.dropFirst()
            switch token.first {
            case "p":
                if argument == "+" || argument == "-" {
                    driver.flag = argument == "+"
                } else if let number = Int(argument) {
                    driver.key = number
                }
                driver.version += 1
            case "e": events.send(())
            case "s": own.ticks += 1
            default: preconditionFailure("unknown token \(token)")
            }
            if host == nil { show() }
            settle()
            out.append(String(token))
            var seen: [String] = []
            for entry in log.entries[before...] where !seen.contains(entry) {
                seen.append(entry)
            }
            out += seen
        }
        return out.joined(separator: " ")
    }

    private func show() {
        let host = NSHostingView(rootView: Parent(kind: kind, driver: driver, own: own, events: events, log: log))
        let window = NSWindow(
            contentRect: NSRect(x: 0, y: 0, width: 200, height: 100), styleMask: [.borderless], backing: .buffered,
            defer: false)
        window.contentView = host
        self.host = host
        self.window = window
    }

    /// Lets SwiftUI apply what changed: a few turns of the main loop and a layout pass.
    private func settle() {
        for _ in 0..<3 {
            RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02))
            host?.layoutSubtreeIfNeeded()
        }
    }
}

/// What ``playDeliveryGate(requestsPerCycle:cycles:)`` saw.
package struct DeliveryGateResult: Equatable, Sendable {
    package var requests: Int
    package var deliveries: Int
    /// Evaluations of the gated content after it appeared.
    package var evaluations: Int
}

/// A view gated on a context's deliveries, hosted, while another thread asks the context for updates
/// `requestsPerCycle` times in each of `cycles` rounds; the main run loop turns between rounds.
@MainActor
package func playDeliveryGate(requestsPerCycle: Int, cycles: Int) -> DeliveryGateResult {
    final class Counter {
        var evaluations = 0
    }
    struct Gated: View {
        let counter: Counter
        var body: some View {
            counter.evaluations += 1
            return Text("\(counter.evaluations)")
        }
    }
    let context = ViewUpdatingContext(refreshEvents: [])
    let deliveries = ThreadSafe(AtomicCounter())
    context.onUpdate { _ in deliveries.value.add() }
    let counter = Counter()
    let host = NSHostingView(rootView: Gated(counter: counter).updatesOnly(onDeliveryOf: context))
    let window = NSWindow(
        contentRect: NSRect(x: 0, y: 0, width: 200, height: 100), styleMask: [.borderless], backing: .buffered,
        defer: false)
    window.contentView = host
    host.layoutSubtreeIfNeeded()
    let appeared = counter.evaluations
    for _ in 0..<cycles {
        onAnotherThread { for _ in 0..<requestsPerCycle { context.setNeedsUpdate() } }
        let target = deliveries.value.value + 1
        let deadline = Date(timeIntervalSinceNow: 10)
        while deliveries.value.value < target && Date() < deadline {
            RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
        }
        for _ in 0..<3 {
            RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
            host.layoutSubtreeIfNeeded()
        }
    }
    _ = window
    return DeliveryGateResult(
        requests: requestsPerCycle * cycles, deliveries: deliveries.value.value,
        evaluations: counter.evaluations - appeared)
}
#endif

#if canImport(AppKit)
import AppKit

/// What ``playAppKitInvalidations()`` saw on real AppKit views.
package struct AppKitInvalidationsResult: Equatable, Sendable {
    package var needsLayoutAfterSet = false
    package var needsDisplayAfterSet = false
    package var needsLayoutAfterEqualSet = true
    package var callbacks = 0
    package var customCalls = 0
    package var deliveries: [Bool] = []
}

/// Sets `@ViewInvalidating` properties of AppKit views and reads what AppKit says (main thread).
@MainActor
package func playAppKitInvalidations() -> AppKitInvalidationsResult {
    final class Count: @unchecked Sendable {
        // @unchecked Sendable: main thread only.
        var value = 0
    }
    struct Custom: ViewInvalidation {
        let count: Count
        func invalidate(view: NSView) { count.value += 1 }
    }
    final class Probe: NSView, ViewUpdating, ViewInvalidationObserving {
        static let customCount = Count()
        let updateContext = ViewUpdatingContext(scheduler: ManualScheduler(), refreshEvents: [])
        var callbacks = 0
        @ViewInvalidating(.layout) var gap: CGFloat = 0
        @ViewInvalidating(.display, Custom(count: Probe.customCount), .update(animated: true)) var color = 0

        func invalidate(view: NSView) { callbacks += 1 }
    }
    var result = AppKitInvalidationsResult()
    let view = Probe(frame: NSRect(x: 0, y: 0, width: 10, height: 10))
    view.updateContext.onUpdate { result.deliveries.append($0) }
    view.needsLayout = false
    view.gap = 4
    result.needsLayoutAfterSet = view.needsLayout
    view.needsLayout = false
    view.gap = 4
    result.needsLayoutAfterEqualSet = view.needsLayout
    view.needsDisplay = false
    view.color = 1
    result.needsDisplayAfterSet = view.needsDisplay
    result.callbacks = view.callbacks
    result.customCalls = Probe.customCount.value
    view.updateContext.update()
    return result
}
#endif
