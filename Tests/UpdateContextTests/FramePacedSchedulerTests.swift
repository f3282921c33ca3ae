import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// `FramePacedScheduler` on the real main run loop (XCTest runs tests on the main thread). Everything is
/// counted in ticks and deliveries, never in wall time, so a loaded machine cannot make it flaky.
final class FramePacedSchedulerTests: XCTestCase {
    /// What the updater saw, read on the main thread.
    private final class Probe: @unchecked Sendable {
        // @unchecked Sendable: `issued` is atomic; the rest is written by the updater on the main thread.
        let issued = AtomicCounter()
        var seen = 0
        var deliveries = 0
        var ticksAtDeliveries: [Int] = []
    }

    func testAFastProducerGetsAtMostOneDeliveryPerTickAndTheLastRequestIsDelivered() {
        let scheduler = FramePacedScheduler(framesPerSecond: 120)
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let probe = Probe()
        context.onUpdate { _ in
            probe.deliveries += 1
            probe.ticksAtDeliveries.append(scheduler.tickCount)
            probe.seen = probe.issued.value
        }
        let total = 20_000
        let finished = AtomicCounter()
        Thread.detachNewThread {
            for index in 0..<total {
                probe.issued.add()
                context.setNeedsUpdate()
                if index % 50 == 0 { usleep(100) }  // a fast source, not a spin: the main loop gets frames
            }
            finished.add()
        }
        spinMainLoop(timeout: 60) { finished.value == 1 && probe.seen == total }
        XCTAssertEqual(finished.value, 1)
        XCTAssertEqual(probe.seen, total, "the last delivery saw the last request")
        XCTAssertGreaterThan(probe.deliveries, 0)
        XCTAssertLessThanOrEqual(probe.deliveries, scheduler.tickCount, "at most one delivery per tick")
        XCTAssertEqual(
            Set(probe.ticksAtDeliveries).count, probe.ticksAtDeliveries.count, "no tick delivered twice")
        XCTAssertLessThan(probe.deliveries, total, "requests within a frame coalesce")

        // Idle: the clock pauses after the tick that found nothing more, and no tick fires while idle.
        spinMainLoop(timeout: 10) { scheduler.isPaused }
        XCTAssertTrue(scheduler.isPaused)
        let idleTicks = scheduler.tickCount
        turnMainLoop(20)
        XCTAssertEqual(scheduler.tickCount, idleTicks, "no tick while idle")

        // The next request resumes it.
        context.setNeedsUpdate()
        XCTAssertFalse(scheduler.isPaused)
        let before = probe.deliveries
        spinMainLoop { probe.deliveries > before }
        XCTAssertEqual(probe.deliveries, before + 1)
    }

    func testTheRulesAndUpdateAreUnchanged() {
        let scheduler = FramePacedScheduler(framesPerSecond: 60)
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        context.setNeedsUpdate(animated: false)
        context.setNeedsUpdate(animated: true)
        XCTAssertEqual(deliveries.letters, "n", "a false then true still delivers at once")
        context.update(animated: false)
        XCTAssertEqual(deliveries.letters, "nn", "update() is immediate")
        context.setNeedsUpdate(animated: true)
        spinMainLoop { deliveries.count == 3 }
        XCTAssertEqual(deliveries.letters, "nna")
    }

    func testReleasingTheContextStopsEverything() {
        let scheduler = FramePacedScheduler(framesPerSecond: 60)
        let deliveries = Deliveries()
        weak var weakContext: ViewUpdatingContext?
        do {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            context.onUpdate { deliveries.record($0) }
            context.setNeedsUpdate()
            weakContext = context
        }
        XCTAssertNil(weakContext)
        spinMainLoop(timeout: 10) { scheduler.isPaused }
        XCTAssertTrue(scheduler.isPaused, "the clock paused after the tick that found nothing to deliver")
        XCTAssertEqual(deliveries.count, 0)
    }

    func testANewSchedulerIsPausedUntilTheFirstRequest() {
        let scheduler = FramePacedScheduler(framesPerSecond: 60)
        XCTAssertTrue(scheduler.isPaused)
        turnMainLoop(5)
        XCTAssertEqual(scheduler.tickCount, 0)
        XCTAssertTrue(CoalescingScheduler.framePaced === FramePacedScheduler.framePaced)
    }

    func testRequestsFromAnotherThreadResumeTheClockOnTheMainThread() {
        let scheduler = FramePacedScheduler(framesPerSecond: 60)
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        onAnotherThread { context.setNeedsUpdate(animated: true) }
        spinMainLoop { deliveries.count == 1 }
        XCTAssertEqual(deliveries.letters, "a")
        XCTAssertEqual(deliveries.offMainCount, 0)
    }
}
