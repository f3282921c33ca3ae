import Foundation
import XCTest

@testable import CoalescingRuntime
@testable import NotificationCoalescing

/// The frame rate of `FramePacedScheduler` on every platform (issue 24, item 3): the plan each system
/// gets (decided apart from the clock, so that the iOS, tvOS, visionOS and macOS branches are checked
/// here), and the scheduler on a clock the test ticks by hand. Counted in ticks and posts, never in time.
final class FrameClockPlanTests: XCTestCase {
    func testEachPlatformGetsItsPlan() {
        let cases: [(Double, Bool, FrameClockPlan.Display, FrameClockPlan)] = [
            // Linux, watchOS, macOS below 14: a timer at the rate, followed or capped alike.
            (60, true, .none, .timer(framesPerSecond: 60)),
            (30, false, .none, .timer(framesPerSecond: 30)),
            // `.framePaced` where a display link exists: the display's own rate, uncapped.
            (60, true, .frameRateRange, .displayLink),
            (60, true, .framesPerSecondOnly, .displayLink),
            // A cap with preferredFrameRateRange (iOS/tvOS 15, visionOS, macOS 14): down to half the cap.
            (30, false, .frameRateRange, .displayLinkRange(minimum: 15, maximum: 30, preferred: 30)),
            (120, false, .frameRateRange, .displayLinkRange(minimum: 60, maximum: 120, preferred: 120)),
            (45, false, .frameRateRange, .displayLinkRange(minimum: 22.5, maximum: 45, preferred: 45)),
            // A cap with preferredFramesPerSecond (iOS/tvOS 13–14): whole frames, rounded down, at least 1.
            (30, false, .framesPerSecondOnly, .displayLinkFramesPerSecond(30)),
            (59.9, false, .framesPerSecondOnly, .displayLinkFramesPerSecond(59)),
            (0.5, false, .framesPerSecondOnly, .displayLinkFramesPerSecond(1)),
        ]
        for (rate, follows, display, expected) in cases {
            XCTAssertEqual(expected.usesDisplayLink, display != .none, "\(expected): a display link where one exists")
            XCTAssertEqual(
                FrameClockPlan.plan(framesPerSecond: rate, followsDisplay: follows, display: display), expected,
                "\(rate) fps, follows display: \(follows), \(display)")
        }
    }

    func testOnThisSystemTheSchedulersPlansAreTheTimerAndMainFollowsTheDisplay() {
        XCTAssertTrue(FramePacedScheduler.framePaced.followsDisplay)
        XCTAssertFalse(FramePacedScheduler(framesPerSecond: 30).followsDisplay)
        #if os(Linux)
        XCTAssertEqual(FrameClockPlan.Display.current, .none)
        XCTAssertEqual(FramePacedScheduler(framesPerSecond: 30).plan, .timer(framesPerSecond: 30))
        XCTAssertEqual(FramePacedScheduler.framePaced.plan, .timer(framesPerSecond: 60))
        #endif
    }

    /// A capped scheduler on a display with frame-rate ranges hands the capped plan to its clock, made once
    /// on first need; each tick runs at most one turn, and the clock pauses when a tick finds nothing.
    func testACappedSchedulerTicksItsClockByHandOnePostPerTick() {
        let made = ClockFactory()
        let scheduler = FramePacedScheduler(
            framesPerSecond: 30, followsDisplay: false, display: .frameRateRange, makeClock: made.make)
        XCTAssertNil(made.clock, "no clock before work asks for one")
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var posts = 0
        context.observe(Notification.Name("frame")) { _, _ in posts += 1 }
        for _ in 0..<100 { context.enqueue(Notification(name: Notification.Name("frame"))) }
        let clock = try! XCTUnwrap(made.clock)
        XCTAssertEqual(made.plans, [.displayLinkRange(minimum: 15, maximum: 30, preferred: 30)])
        XCTAssertEqual(made.rates, [30])
        XCTAssertFalse(clock.isPaused, "the request resumed the clock")
        XCTAssertEqual(posts, 0, "nothing before the frame")
        clock.fire()
        XCTAssertEqual(posts, 1, "one frame, one turn: the hundred coalesce")
        XCTAssertEqual(scheduler.tickCount, 1)
        XCTAssertTrue(clock.isPaused, "the tick found nothing more: paused until the next request")
        clock.fire()  // a frame that comes anyway does nothing
        XCTAssertEqual(posts, 1)
        context.enqueue(Notification(name: Notification.Name("frame")))
        XCTAssertFalse(clock.isPaused)
        clock.fire()
        XCTAssertEqual(posts, 2)
        XCTAssertEqual(made.plans.count, 1, "one clock for the scheduler's life")
    }
}

/// Makes `ManualFrameClock`s and records what the scheduler asked for. Main thread only.
private final class ClockFactory: @unchecked Sendable {
    // @unchecked Sendable: the scheduler makes its clock on the main thread, where the test reads it.
    var plans: [FrameClockPlan] = []
    var rates: [Double] = []
    var clock: ManualFrameClock?

    func make(_ plan: FrameClockPlan, _ rate: Double, _ tick: @escaping () -> Void) -> any FrameClock {
        plans.append(plan)
        rates.append(rate)
        let clock = ManualFrameClock(tick: tick)
        self.clock = clock
        return clock
    }
}

/// A frame clock the test ticks by hand: `fire()` is a display refresh (it does nothing while paused).
private final class ManualFrameClock: FrameClock {
    var isPaused = true
    private let tick: () -> Void
    private(set) var modes: [RunLoop.Mode] = []
    private(set) var isInvalidated = false

    init(tick: @escaping () -> Void) { self.tick = tick }

    func fire() {
        if !isPaused && !isInvalidated { tick() }
    }

    func add(mode: RunLoop.Mode) { modes.append(mode) }

    func invalidate() { isInvalidated = true }
}
