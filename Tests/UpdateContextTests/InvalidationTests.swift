import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// A custom invalidation that records what it was given.
struct Record: ViewUpdatingInvalidation {
    let name: String
    let log: InvalidationLog

    func invalidate(object: any ViewUpdating) {
        log.entries.append(
            "\(name):\(ObjectIdentifier(object) == log.expected.map(ObjectIdentifier.init) ? "self" : "other")")
    }
}

final class InvalidationLog: @unchecked Sendable {
    // @unchecked Sendable: used by one test on one thread.
    var entries: [String] = []
    weak var expected: AnyObject?
}

/// The scheduler the classes below use (created on the main thread, where XCTest runs).
private let invalidationScheduler = ManualScheduler()

final class Badge: ViewUpdating {
    let updateContext = ViewUpdatingContext(scheduler: invalidationScheduler, refreshEvents: [])
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}
    let log = InvalidationLog()

    @ViewInvalidating(.update) var title = ""
    @ViewInvalidating(.update(animated: true)) var progress = 0.0
    @ViewInvalidating(Record(name: "a", log: sharedLog), .update, Record(name: "b", log: sharedLog)) var count = 0
    @ViewInvalidating(Record(name: "only", log: sharedLog)) var plain = 0
}

/// Ten invalidations in one attribute (Apple's limit): each runs once per change, in the order written.
final class Crowded: ViewUpdating {
    let updateContext = ViewUpdatingContext(scheduler: invalidationScheduler, refreshEvents: [])
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}

    @ViewInvalidating(
        Record(name: "1", log: sharedLog), Record(name: "2", log: sharedLog), Record(name: "3", log: sharedLog),
        Record(name: "4", log: sharedLog), .update(animated: true), Record(name: "6", log: sharedLog),
        Record(name: "7", log: sharedLog), Record(name: "8", log: sharedLog), Record(name: "9", log: sharedLog),
        Record(name: "10", log: sharedLog), Record(name: "11", log: sharedLog), Record(name: "12", log: sharedLog))
    var value = 0
}

/// Property initialisers cannot read `self`: the custom invalidations log here.
let sharedLog = InvalidationLog()

final class InvalidationTests: XCTestCase {
    private var badge: Badge!
    private var deliveries: Deliveries!

    override func setUp() {
        badge = Badge()
        deliveries = Deliveries()
        badge.updateContext.onUpdate { [deliveries] in deliveries!.record($0) }
        sharedLog.entries = []
        sharedLog.expected = badge
    }

    override func tearDown() {
        XCTAssertNoThrow(try invalidationScheduler.expectIdle())
        badge = nil
    }

    func testUpdateRequestsOneCoalescedUpdate() {
        badge.title = "a"
        badge.title = "b"
        badge.title = "c"
        XCTAssertEqual(deliveries.count, 0, "nothing before the end of the cycle")
        invalidationScheduler.turn()
        XCTAssertEqual(deliveries.letters, "n")
        XCTAssertEqual(badge.title, "c")
    }

    func testUpdateAnimatedFollowsTheRules() {
        badge.progress = 0.5
        invalidationScheduler.turn()
        XCTAssertEqual(deliveries.letters, "a")
    }

    func testAnEqualValueInvalidatesNothing() {
        badge.title = ""
        badge.count = 0
        badge.plain = 0
        XCTAssertFalse(badge.updateContext.isUpdatePending)
        XCTAssertEqual(sharedLog.entries, [])
    }

    func testSeveralInvalidationsRunInOrderWithTheEnclosingObject() {
        badge.count = 1
        XCTAssertEqual(sharedLog.entries, ["a:self", "b:self"], "custom ones get the enclosing object, in order")
        XCTAssertTrue(badge.updateContext.isUpdatePending, "and .update between them requested an update")
        badge.count = 2
        XCTAssertEqual(sharedLog.entries.count, 4)
        invalidationScheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
    }

    func testACustomInvalidationAlone() {
        badge.plain = 3
        badge.plain = 3
        badge.plain = 4
        XCTAssertEqual(sharedLog.entries, ["only:self", "only:self"])
        XCTAssertFalse(badge.updateContext.isUpdatePending)
    }

    func testTwelveInvalidationsRunInTheOrderWrittenOncePerChange() {
        let crowded = Crowded()
        var flags: [Bool] = []
        crowded.updateContext.onUpdate { flags.append($0) }
        sharedLog.expected = crowded
        crowded.value = 1
        crowded.value = 1
        let names = sharedLog.entries.map { $0.split(separator: ":")[0] }
        XCTAssertEqual(names, ["1", "2", "3", "4", "6", "7", "8", "9", "10", "11", "12"])
        XCTAssertTrue(sharedLog.entries.allSatisfy { $0.hasSuffix(":self") })
        invalidationScheduler.turn()
        XCTAssertEqual(flags, [true], "the .update among them asked once, animated")
    }

    func testUpdateFromAnotherThreadIsDeliveredOnTheSchedulersThread() {
        let context = badge.updateContext
        onAnotherThread { context.setNeedsUpdate() }
        invalidationScheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
        XCTAssertEqual(deliveries.offMainCount, 0)
    }
}

// MARK: StateRendering

struct Screen: Equatable, Sendable {
    var title = ""
    var count = 0
}

private let renderingScheduler = ManualScheduler()

@MainActor
final class ScreenController: StateRendering {
    @RenderedState(scheduler: renderingScheduler) var state = Screen()
    @RenderedState(animated: true, scheduler: renderingScheduler) var unused = Screen()
    var renders: [(state: Screen, old: Screen?, animated: Bool)] = []

    func render(state: Screen, oldState: Screen?, animated: Bool) {
        renders.append((state, oldState, animated))
    }
}

@MainActor
final class AnimatedController: StateRendering {
    @RenderedState(animated: true, scheduler: renderingScheduler) var state = Screen()
    var flags: [Bool] = []

    func render(state: Screen, oldState: Screen?, animated: Bool) {
        flags.append(animated)
    }
}

/// XCTest runs test methods on the main thread; on Linux a `@MainActor` test class cannot be discovered,
/// so each test asserts the main actor for its body.
final class StateRenderingTests: XCTestCase {
    override func tearDown() {
        XCTAssertNoThrow(try renderingScheduler.expectIdle())
    }

    func testOneRenderPerCycleWithTheStateThenAndTheOldState() {
        MainActor.assumeIsolated {
            let controller = ScreenController()
            controller.state.title = "a"
            controller.state.count = 1
            controller.state.count = 2
            XCTAssertEqual(controller.renders.count, 0)
            renderingScheduler.turn()
            XCTAssertEqual(controller.renders.count, 1)
            XCTAssertEqual(controller.renders[0].state, Screen(title: "a", count: 2))
            XCTAssertNil(controller.renders[0].old)
            controller.state.count = 3
            renderingScheduler.turn()
            XCTAssertEqual(controller.renders.count, 2)
            XCTAssertEqual(controller.renders[1].old, Screen(title: "a", count: 2))
        }
    }

    func testEqualStatesRenderNothing() {
        MainActor.assumeIsolated {
            let controller = ScreenController()
            controller.state.count = 1
            renderingScheduler.turn()
            controller.state.count = 1
            controller.state = Screen(title: "", count: 1)
            renderingScheduler.turn()
            XCTAssertEqual(controller.renders.count, 1)
        }
    }

    func testTheFirstAccessRendersTheInitialState() {
        MainActor.assumeIsolated {
            let controller = ScreenController()
            _ = controller.state
            renderingScheduler.turn()
            XCTAssertEqual(controller.renders.count, 1)
            XCTAssertEqual(controller.renders[0].state, Screen())
            XCTAssertNil(controller.renders[0].old)
        }
    }

    func testAnimatedState() {
        MainActor.assumeIsolated {
            let controller = AnimatedController()
            controller.state.count = 1
            renderingScheduler.turn()
            XCTAssertEqual(controller.flags, [true])
        }
    }

    func testAForcedUpdateAndTheForegroundRefreshRenderAnUnchangedState() {
        MainActor.assumeIsolated {
            let controller = ScreenController()
            controller.state.title = "x"
            renderingScheduler.turn()
            controller.$state.context.update()
            XCTAssertEqual(controller.renders.count, 2)
            XCTAssertEqual(controller.renders[1].old, Screen(title: "x"))
            NotificationCenter.default.post(name: .applicationWillEnterForeground, object: nil)
            XCTAssertEqual(controller.renders.count, 3, "the lifecycle refresh renders")
        }
    }

    func testAReleasedControllerIsFreedAndRendersNothing() {
        MainActor.assumeIsolated {
            weak var weakController: ScreenController?
            weak var weakContext: StateUpdatingContext<Screen>?
            do {
                let controller = ScreenController()
                controller.state.count = 5
                weakController = controller
                weakContext = controller.$state
            }
            XCTAssertNil(weakController)
            XCTAssertNil(weakContext, "the state's context goes with its controller")
            renderingScheduler.turn()
        }
    }
}
