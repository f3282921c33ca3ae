import CoalescingTestSupport
import CoreFoundation
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The core's timelines that a client found broken once, and two it asked to pin either way: cross-thread
/// requests arriving after the animated one, observers at the guard's order, nested private loops, passes and
/// their fallback, suspension and deliveries inside updaters. Run-loop cases stop the loop from the updater: a
/// run that ends by its deadline means the loop slept with the update pending (an event, not a duration).
final class CoreTimelineTests: XCTestCase {
    // MARK: 1. StateUpdatingContext: the early flush follows the order of the requests, not of the commits

    struct Screen: Equatable {
        var title = ""
        var count = 0
    }

    /// Thread B commits a non-animated change and is held before its request; the main thread commits
    /// and requests an animated change; then B's request arrives. The requests read `T F`: one
    /// non-animated delivery, which must show the current state (both changes), not the state before the
    /// animated change — nothing else would ever render it.
    func testACrossThreadNonAnimatedRequestArrivingAfterTheAnimatedOneRendersTheCurrentState() {
        let scheduler = HoldingScheduler()
        let view = StateUpdatingContext(state: Screen(), scheduler: scheduler, refreshEvents: [])
        var renders: [(state: Screen, animated: Bool)] = []
        view.onRender { state, _, animated in renders.append((state, animated)) }
        scheduler.runTurn()
        XCTAssertEqual(renders.count, 1, "the first render")

        let committed = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        scheduler.holdNextOffThreadQuery {
            committed.signal()  // B has committed and is about to request
            go.wait()
        }
        let box = UncheckedBox(view)
        Thread.detachNewThread {
            box.value.modify(animated: false) { $0.title = "from B" }
            done.signal()
        }
        committed.wait()
        view.modify(animated: true) { $0.count = 1 }  // committed and requested before B's request
        go.signal()
        done.wait()
        scheduler.runTurn()
        XCTAssertEqual(renders.last?.state, Screen(title: "from B", count: 1), "the stale pre-animation state")
        XCTAssertEqual(renders.last?.animated, false, "T then F: not animated")
        scheduler.runTurn()
        XCTAssertEqual(renders.count, 2, "one delivery for the cycle")
        XCTAssertFalse(scheduler.hasRequestedTurn)
    }

    /// The same commits with the requests in commit order (`F T`) still flush the non-animated change
    /// early, without the animated one, and animate the animated one at the end of the cycle.
    func testWhenTheRequestsArriveInCommitOrderTheEarlyFlushShowsOnlyTheNonAnimatedChange() {
        let scheduler = HoldingScheduler()
        let view = StateUpdatingContext(state: Screen(), scheduler: scheduler, refreshEvents: [])
        var renders: [(state: Screen, animated: Bool)] = []
        view.onRender { state, _, animated in renders.append((state, animated)) }
        scheduler.runTurn()
        let box = UncheckedBox(view)
        onAnotherThread { box.value.modify(animated: false) { $0.title = "from B" } }
        view.modify(animated: true) { $0.count = 1 }
        scheduler.runTurn()
        XCTAssertEqual(renders.dropFirst().map(\.state), [Screen(title: "from B"), Screen(title: "from B", count: 1)])
        XCTAssertEqual(renders.dropFirst().map(\.animated), [false, true])
    }

    // MARK: 2. RunLoopScheduler: a request from an observer after the guard, at the same order

    func testARequestFromAnObserverAddedLaterAtTheGuardsOrderIsDelivered() {
        let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])  // the guard exists now
        var deliveries = 0
        context.onUpdate { _ in
            deliveries += 1
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        let last = MainLoopObserver(order: CFIndex.max, once: true) { context.setNeedsUpdate() }
        defer { last.invalidate() }
        XCTAssertTrue(runUntilStopped(), "the loop slept with the update pending")
        XCTAssertEqual(deliveries, 1)
    }

    /// Found by the random run-loop test: after the guard, the request's wake-up is used up by a nested
    /// loop in a private mode that the same observer runs; the pass must still not sleep.
    func testARequestAfterTheGuardFollowedByANestedPrivateLoopIsDelivered() {
        let mode = RunLoop.Mode("CoreTimelineTests.private")
        let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in
            deliveries += 1
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        let last = MainLoopObserver(order: CFIndex.max, once: true) {
            context.setNeedsUpdate()
            runNestedLoop(mode: mode)
        }
        defer { last.invalidate() }
        XCTAssertTrue(runUntilStopped(), "the nested loop used up the wake-up; the loop slept")
        XCTAssertEqual(deliveries, 1)
    }

    // MARK: 3. RunLoopScheduler: work parked by a nested loop is admitted by the outer pass

    func testAnUpdaterThatRequestsAnotherContextAndWaitsInACustomModeDeliversIt() {
        let mode = RunLoop.Mode("CoreTimelineTests.modal")
        // The scheduler turns in this mode (as a queue's work asks).
        RunLoopScheduler.mainRunLoop.prepare(modes: [mode])
        let outer = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        let other = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var order: [String] = []
        outer.onUpdate { _ in
            order.append("outer")
            other.setNeedsUpdate()
            // A modal wait in a mode of its own: the scheduler turns there, and parks `other` (view updates
            // wait for a common pass).
            runNestedLoop(mode: mode, seconds: 0.02)
        }
        other.onUpdate { _ in
            order.append("other")
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        outer.setNeedsUpdate()
        XCTAssertTrue(runUntilStopped(), "the loop slept with the parked update pending")
        XCTAssertEqual(order, ["outer", "other"])
    }

    // MARK: 4. PassScheduler: a fallback serves only its own batch

    /// The real use: `updateProperties()` calls the context's `updateIfNeeded()`. The next batch must ask
    /// for a pass of its own, and the first batch's fallback must not deliver it outside that pass.
    func testAfterAPassDeliveredItsBatchTheNextBatchAsksForItsOwnPass() {
        let asked = AtomicCounter()
        let context = ViewUpdatingContext.passContext(animated: false, refreshEvents: [])
        context.bindPass { asked.add() }
        let probe = PassProbe()
        context.onUpdate { _ in probe.deliveries.append(probe.insidePass) }
        context.setNeedsUpdate()
        XCTAssertEqual(asked.value, 1)
        probe.pass { context.updateIfNeeded() }  // what updateProperties() does
        XCTAssertEqual(probe.deliveries, [true])
        let passDone = expectation(description: "second pass")
        // Queue order: the first fallback's first hop, this block, the second batch's first hop; then the
        // first fallback's second hop (where it would take the second batch), the pass below, and the
        // second batch's own fallback, which finds its batch served.
        DispatchQueue.main.async {
            DispatchQueue.main.async {
                probe.pass { context.updateIfNeeded() }
                passDone.fulfill()
            }
        }
        context.setNeedsUpdate()  // the next batch, before the first one's fallback has run
        XCTAssertEqual(asked.value, 2, "the next batch asked for no pass")
        wait(for: [passDone], timeout: 5)
        turnMainLoop(5)
        XCTAssertEqual(probe.deliveries, [true, true], "each batch delivered once, inside its own pass")
    }

    /// The same with `runPass()`, the scheduler-level pass.
    func testAFallbackQueuedForABatchThatItsPassDeliveredDoesNotTakeTheNextBatch() {
        let scheduler = PassScheduler {}
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let probe = PassProbe()
        context.onUpdate { _ in probe.deliveries.append(probe.insidePass) }
        context.setNeedsUpdate()
        probe.pass { XCTAssertEqual(scheduler.runPass(), 1) }
        let passDone = expectation(description: "second pass")
        // Queue order: the first fallback's first hop, then this block; then the first fallback's second
        // hop, the second batch's first hop, and the pass below.
        DispatchQueue.main.async {
            context.setNeedsUpdate()
            DispatchQueue.main.async {
                probe.pass { scheduler.runPass() }
                passDone.fulfill()
            }
        }
        wait(for: [passDone], timeout: 5)
        turnMainLoop(5)
        XCTAssertEqual(probe.deliveries, [true, true], "the first batch's fallback delivered the second batch")
    }

    // MARK: 5. animateWithFlushedUpdates: only what `changes` requested joins the animated delivery

    private func animate(_ block: @escaping () -> Void) { block() }

    func testWhileSuspendedAnEarlierNonAnimatedRequestIsNotDeliveredAnimatedOrForced() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var deliveries: [(animated: Bool, forced: Bool)] = []
        context.onUpdate { animated in deliveries.append((animated, context.storage.isForcedDelivery)) }
        context.setNeedsUpdate(animated: false)
        context.suspend()
        context.animateWithFlushedUpdates(using: animate) {}  // requests nothing
        context.resume()
        XCTAssertEqual(deliveries.map(\.animated), [false], "the earlier non-animated change animated")
        XCTAssertEqual(deliveries.map(\.forced), [false])
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(deliveries.count, 1)
    }

    func testWhileSuspendedWhatChangesRequestedDoesNotAnimateTheEarlierChanges() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var letters = ""
        context.onUpdate { letters += $0 ? "a" : "n" }
        context.setNeedsUpdate(animated: false)
        context.suspend()
        context.animateWithFlushedUpdates(using: animate) { context.setNeedsUpdate() }
        context.resume()
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(letters, "n", "one delivery at resume; the non-animated changes must not animate")
    }

    func testInsideAnUpdaterAnEarlierNonAnimatedRequestIsNotDeliveredAnimated() {
        XCTAssertEqual(
            flushedInsideAnUpdater(changesRequest: false), "nn",
            "the earlier non-animated request was delivered animated")
    }

    func testInsideAnUpdaterWhatChangesRequestedIsAnimatedAfterTheEarlierChanges() {
        XCTAssertEqual(
            flushedInsideAnUpdater(changesRequest: true), "nna",
            "the earlier changes flush without animation, then the new ones animate")
    }

    /// The deliveries (`n`/`a`) when the first delivery's updater requests `false`, then calls
    /// `animateWithFlushedUpdates` with changes that request an update or nothing.
    private func flushedInsideAnUpdater(changesRequest: Bool) -> String {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var letters = ""
        var first = true
        context.onUpdate { animated in
            letters += animated ? "a" : "n"
            guard first else { return }
            first = false
            context.setNeedsUpdate(animated: false)
            context.animateWithFlushedUpdates(using: self.animate) {
                if changesRequest { context.setNeedsUpdate() }
            }
        }
        context.setNeedsUpdate()
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        return letters
    }

    // MARK: Pinned: refreshes around a request, and resume then suspend before the next turn

    /// Two lifecycle refreshes posted on another thread around a request, in one cycle: the last thing
    /// asked was a refresh, so the cycle's last delivery is forced. They arrive together, so it is one.
    func testTwoRefreshesFromAnotherThreadAroundARequestEndInOneForcedDelivery() {
        let scheduler = ManualScheduler()
        let name = Notification.Name("CoreTimelineTests.refresh")
        let center = NotificationCenter()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [name], center: center)
        var forced: [Bool] = []
        context.onUpdate { _ in forced.append(context.storage.isForcedDelivery) }
        onAnotherThread {
            center.post(name: name, object: nil)
            context.setNeedsUpdate()
            center.post(name: name, object: nil)
        }
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(forced, [true])
    }

    /// `resume()` inside an updater defers the delivery it makes to the next turn; a `suspend()` before
    /// that turn keeps it for the next `resume()` — a suspended context delivers nothing.
    func testAResumeInsideAnUpdaterFollowedBySuspendDeliversNothingUntilTheNextResume() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var letters = ""
        context.onUpdate { animated in
            letters += animated ? "a" : "n"
            if letters == "n" {  // inside the early flush, the animated update is still scheduled
                context.suspend()
                context.resume()  // the last resume: what is scheduled is delivered, later
            }
        }
        context.setNeedsUpdate(animated: false)
        context.setNeedsUpdate(animated: true)  // flushes "n" now
        XCTAssertEqual(letters, "n")
        context.suspend()  // before the next turn
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(letters, "n", "delivered while suspended")
        XCTAssertTrue(context.isUpdatePending, "kept for resume")
        context.resume()
        XCTAssertEqual(letters, "na")
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(letters, "na")
    }
}

/// Whether deliveries ran inside a pass. Main thread only (the updaters and the queued blocks run there).
private final class PassProbe: @unchecked Sendable {
    // @unchecked Sendable: touched only on the main thread, by updaters and blocks on the main queue.
    var insidePass = false
    var deliveries: [Bool] = []

    func pass(_ body: () -> Void) {
        insidePass = true
        body()
        insidePass = false
    }
}

/// A scheduler for the main thread's stand-in (the test thread) that can hold another thread once, the
/// next time that thread asks whether it is the scheduler's: the moment between a `StateUpdatingContext`
/// commit and its request.
private final class HoldingScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `hold` is behind a lock; the rest is the base class's.
    private let hold = NotificationCoalescing.Locked<(@Sendable () -> Void)?>(nil)

    override var isMainThreadScheduler: Bool { true }

    override var isCurrent: Bool {
        let mine = super.isCurrent
        if !mine,
            let action = hold.withLock({ held -> (@Sendable () -> Void)? in
                defer { held = nil }
                return held
            })
        {
            action()
        }
        return mine
    }

    func holdNextOffThreadQuery(_ action: @escaping @Sendable () -> Void) {
        hold.withLock { $0 = action }
    }
}
