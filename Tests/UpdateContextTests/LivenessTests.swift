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

/// `ViewUpdatingContext` never forgets an update, never delivers where it must not, and lets go of what
/// it held. Run-loop tests stop the loop from the updater: a run that ends by its deadline instead means
/// the loop slept with the update pending (an event, not a duration).
final class UpdateLivenessTests: XCTestCase {
    // MARK: 2. A request late in the pass (layoutSubviews during Core Animation's commit)

    func testARequestFromALaterObserverInThePassIsDeliveredWithoutAnOutsideEvent() {
        let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in
            deliveries += 1
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        let commit = MainLoopObserver(order: 2_000_000, once: true) { context.setNeedsUpdate() }
        defer { commit.invalidate() }
        XCTAssertTrue(runUntilStopped(), "the loop slept with the update pending")
        XCTAssertEqual(deliveries, 1)
    }

    // MARK: 3. A nested run loop inside an updater

    func testARequestOnAnotherContextBeforeANestedLoopInsideAnUpdaterIsDeliveredAfterIt() {
        let outer = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        let other = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var order: [String] = []
        outer.onUpdate { _ in
            order.append("outer")
            other.setNeedsUpdate()
            _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02))  // a modal wait
        }
        other.onUpdate { _ in
            order.append("other")
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        outer.setNeedsUpdate()
        XCTAssertTrue(runUntilStopped(), "the nested loop used up the wake-up; the loop slept")
        XCTAssertEqual(order, ["outer", "other"])
    }

    func testARequestOnItsOwnContextDuringANestedLoopIsDeliveredOnceAfterTheUpdater() {
        let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            if calls == 1 {
                _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
                context.setNeedsUpdate()
                _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
            } else {
                CFRunLoopStop(CFRunLoopGetCurrent())
            }
        }
        context.setNeedsUpdate()
        XCTAssertTrue(runUntilStopped())
        XCTAssertEqual(calls, 2, "never recursively, and not lost")
    }

    // MARK: 4. A context passed by while it delivers

    func testAContextPassedByDuringItsDeliveryTakesLaterRequests() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            if calls == 1 { scheduler.turn() }  // a nested loop inside the updater turns the scheduler
        }
        context.setNeedsUpdate()  // registered for the next turn…
        context.update()  // …which the nested turn runs while this delivery is under way
        XCTAssertEqual(calls, 1)
        context.setNeedsUpdate()
        XCTAssertEqual(try scheduler.runUntilIdle(), 1, "the later request asked for no turn")
        XCTAssertEqual(calls, 2)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testAContextPassedByDuringItsDeliveryTakesLaterRequestsOnDispatchMain() {
        let context = ViewUpdatingContext(scheduler: .dispatchMain, refreshEvents: [])
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            if calls == 1 {
                // A nested loop inside the updater that drains the main queue (as a modal session does).
                DispatchMainScheduler.dispatchMain.runTurn()
            }
        }
        context.setNeedsUpdate()
        context.update()
        context.setNeedsUpdate()
        spinMainLoop(until: { calls == 2 })
        XCTAssertEqual(calls, 2)
    }

    // MARK: 8. No cycle between a scheduler and a pending update

    func testReleasingAContextWithAnUpdatePendingFreesItsScheduler() {
        weak var weakScheduler: ManualScheduler?
        do {
            let scheduler = ManualScheduler()
            weakScheduler = scheduler
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            context.onUpdate { _ in }
            context.setNeedsUpdate()
            onAnotherThread { [weak context] in context?.setNeedsUpdate(animated: true) }
        }
        XCTAssertNil(weakScheduler, "the scheduler and the pending update keep each other alive")
    }

    func testReleasingAContextInsideItsOwnUpdaterDuringUpdateIsSafeWhenItHeldTheLastSchedulerReference() {
        final class Holder {
            var context: ViewUpdatingContext?
        }
        let holder = Holder()
        weak var weakScheduler: ManualScheduler?
        do {
            let scheduler = ManualScheduler()
            weakScheduler = scheduler
            holder.context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        }
        var calls = 0
        holder.context?.onUpdate { _ in
            calls += 1
            holder.context = nil  // the last reference to the context, and so to the scheduler
        }
        holder.context?.setNeedsUpdate(animated: false)
        holder.context?.setNeedsUpdate(animated: true)  // flushes now, then would ask for a turn
        XCTAssertEqual(calls, 1)
        XCTAssertNil(weakScheduler)
    }

    // MARK: 9. Removal from another thread

    /// What holds across threads: `remove()` never waits, so an updater that waits for the removing
    /// thread cannot deadlock; a call that the main thread had already begun may finish after `remove()`
    /// returns; no call begins after it returns.
    func testRemovalFromAnotherThreadNeverWaitsForTheCallUnderWayAndNoCallBeginsAfterIt() {
        let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        let removed = AtomicCounter()
        let callsAfterRemoval = AtomicCounter()
        let calls = AtomicCounter()
        var token: ViewUpdatingContext.ViewUpdater?
        token = context.onUpdate { [context] _ in
            if removed.value != 0 { callsAfterRemoval.add() }
            calls.add()
            guard calls.value == 1, let token else { return }
            let removedThere = DispatchSemaphore(value: 0)
            let box = UncheckedBox(token)
            Thread.detachNewThread {
                box.value.remove()  // must return while this updater is still running
                removed.store(1)
                removedThere.signal()
            }
            // The updater waits for the removing thread: a remove() that waited for it would deadlock.
            XCTAssertEqual(removedThere.wait(timeout: .now() + 10), .success, "remove() waited for the updater")
            context.setNeedsUpdate()
        }
        context.update()
        turnMainLoop(5)
        context.update()
        XCTAssertEqual(calls.value, 1, "called again after remove() returned")
        XCTAssertEqual(callsAfterRemoval.value, 0)
    }

    // MARK: 11. No view update in a private mode

    func testAViewUpdateWaitsForACommonPassWhileTheLoopRunsAPrivateMode() {
        let privateMode = RunLoop.Mode("test.liveness.private.\(UUID().uuidString)")
        let queue = NotificationCoalescingContext(scheduler: .mainRunLoop)  // makes the scheduler turn there
        var queued = 0
        queue.observe(.init("test.private")) { _, _ in queued += 1 }
        let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        queue.enqueue(Notification(name: .init("test.private")), forModes: [privateMode])
        context.setNeedsUpdate()
        let keepAlive = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 60, 0, 0, 0) {
            _ in
        }
        CFRunLoopAddTimer(CFRunLoopGetMain(), keepAlive, cfRunLoopMode(privateMode.rawValue))
        defer { CFRunLoopTimerInvalidate(keepAlive) }
        for _ in 0..<5 { _ = CFRunLoopRunInMode(cfRunLoopMode(privateMode.rawValue), 0.002, false) }
        XCTAssertEqual(queued, 1, "the scheduler turned in the private mode")
        XCTAssertEqual(deliveries, 0, "a view update was delivered in a private mode")
        spinMainLoop(until: { deliveries == 1 })
        XCTAssertEqual(deliveries, 1, "delivered at the next common pass")
    }

    func testAManualTurnInAPrivateModeDeliversNoViewUpdate() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        context.setNeedsUpdate()
        onAnotherThread { context.setNeedsUpdate(animated: true) }
        scheduler.turn(mode: RunLoop.Mode("test.private"))
        XCTAssertEqual(deliveries.count, 0)
        XCTAssertTrue(context.isUpdatePending)
        XCTAssertEqual(try scheduler.runUntilIdle(), 1)
        XCTAssertEqual(deliveries.letters, "a")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    // MARK: 12. One batch, one wake-up

    func testOneBatchAsksForOneTurnWhateverContextsAndThreadsAsked() throws {
        let scheduler = CountingScheduler()
        let view = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let queue = NotificationCoalescingContext(scheduler: scheduler)
        view.setNeedsUpdate()
        queue.enqueue(Notification(name: .init("test.batch")))
        onAnotherThread { view.setNeedsUpdate(animated: true) }
        onAnotherThread { queue.enqueue(Notification(name: .init("test.batch.2"))) }
        XCTAssertEqual(scheduler.asks, 1, "one wake-up per batch")
        scheduler.runTurn()
        view.setNeedsUpdate()
        XCTAssertEqual(scheduler.asks, 2, "the next batch asks again")
        scheduler.runTurn()
    }

    // MARK: 13. StateUpdatingContext and the early non-animated flush

    struct Pair: Equatable, Sendable { var a = 0, b = 0 }

    /// A state context on a manual scheduler whose renderer writes each render as `ab` + `n`/`a`; it has
    /// rendered the initial state (`00n`) when returned.
    private func pairView() throws -> (ManualScheduler, StateUpdatingContext<Pair>, () -> [String]) {
        final class Renders { var list: [String] = [] }
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: Pair(), scheduler: scheduler, refreshEvents: [])
        let renders = Renders()
        view.onRender { state, _, animated in renders.list.append("\(state.a)\(state.b)\(animated ? "a" : "n")") }
        try scheduler.runUntilIdle()
        XCTAssertEqual(renders.list, ["00n"])
        return (scheduler, view, { renders.list })
    }

    func testAnAnimatedChangeAfterANonAnimatedOneIsNotShownByTheEarlyFlushAndAnimatesAtTheEnd() throws {
        let (scheduler, view, renders) = try pairView()
        view.modify(animated: false) { $0.a = 1 }
        view.modify(animated: true) { $0.b = 1 }
        XCTAssertEqual(renders(), ["00n", "10n"], "the early flush shows only the non-animated change")
        try scheduler.runUntilIdle()
        XCTAssertEqual(renders(), ["00n", "10n", "11a"], "the animated change animates at the end of the cycle")
    }

    func testTheSameFromAnotherThread() throws {
        let (scheduler, view, renders) = try pairView()
        onAnotherThread {
            view.modify(animated: false) { $0.a = 1 }
            view.modify(animated: true) { $0.b = 1 }
        }
        try scheduler.runUntilIdle()
        XCTAssertEqual(renders(), ["00n", "10n", "11a"])
    }

    func testTAndThenFRendersEverythingWithoutAnimation() throws {
        let (scheduler, view, renders) = try pairView()
        view.modify(animated: false) { $0.a = 1 }
        view.modify(animated: true) { $0.b = 1 }
        view.modify(animated: false) { $0.a = 2 }
        try scheduler.runUntilIdle()
        XCTAssertEqual(renders(), ["00n", "10n", "21n"])
    }

    // MARK: Suspicions, settled

    func testResumeInsideAnUpdaterDoesNotRerenderAnUnchangedState() throws {
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var renders = 0
        view.onRender { _, _, _ in renders += 1 }
        try scheduler.runUntilIdle()
        XCTAssertEqual(renders, 1)
        var resumed = false
        view.context.onUpdate { animated in
            guard !animated, !resumed else { return }
            resumed = true
            view.context.suspend()
            view.context.resume()  // delivers what is scheduled (the animated request), later: not forced
        }
        view.context.setNeedsUpdate(animated: false)
        view.context.setNeedsUpdate(animated: true)  // the early flush: the updater above resumes inside it
        try scheduler.runUntilIdle()
        XCTAssertTrue(resumed)
        XCTAssertEqual(renders, 1, "an unchanged state was rendered again: the resume became a forced update")
    }

    func testIsUpdatePendingNeverReadsFalseFromAnotherThreadWhileTheRequestIsApplied() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let delivered = AtomicCounter()
        context.onUpdate { _ in delivered.add() }
        let falseReads = AtomicCounter()
        for _ in 0..<300 {
            let before = delivered.value
            let requested = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                context.setNeedsUpdate()
                requested.signal()
                // Until the main thread has delivered, the request is pending: never `false`.
                while delivered.value == before {
                    if !context.isUpdatePending && delivered.value == before { falseReads.add() }
                }
                done.signal()
            }
            requested.wait()
            scheduler.turn()
            done.wait()
        }
        XCTAssertEqual(falseReads.value, 0)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }
}
