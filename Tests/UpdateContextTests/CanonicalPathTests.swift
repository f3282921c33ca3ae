import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// The canonical path: a `ViewUpdating` controller with `@NeedsUpdate` properties and one
/// `updateView(animated:)`, connected by `startUpdatingView()`.
@MainActor
private final class ArticleController: ViewUpdating {
    let updateContext: ViewUpdatingContext
    @NeedsUpdate var title = ""
    @NeedsUpdate(animated: true) var isStarred = false
    /// What each `updateView(animated:)` saw: the title, and `a`/`n` for the flag.
    var renders: [String] = []

    init(scheduler: ManualScheduler, animatesByDefault: Bool = false) {
        updateContext = ViewUpdatingContext(animated: animatesByDefault, scheduler: scheduler, refreshEvents: [])
    }

    func updateView(animated: Bool) {
        renders.append("\(title)\(isStarred ? "*" : ""):\(animated ? "a" : "n")")
    }
}

final class CanonicalPathTests: XCTestCase {
    private var scheduler: ManualScheduler!

    override func setUp() {
        scheduler = ManualScheduler()
    }

    func testStartRendersOnceAtOnceNotAnimatedShowingWhatInitSet() throws {
        let scheduler = scheduler!
        try MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler, animatesByDefault: true)
            controller.title = "Draft"  // before the view exists: a request nobody receives yet
            controller.isStarred = true
            XCTAssertEqual(controller.renders, [])
            controller.startUpdatingView()
            XCTAssertEqual(controller.renders, ["Draft*:n"], "the first render is immediate and not animated")
            // The first render absorbed what init requested: no request of init is delivered again, and a
            // tracked screen renders once in its first cycle.
            scheduler.turn()
            XCTAssertEqual(controller.renders, ["Draft*:n"])
            try scheduler.expectIdle()
            // Untracked, the first render is all.
            let untracked = ArticleController(scheduler: scheduler, animatesByDefault: true)
            untracked.title = "Draft"
            untracked.startUpdatingView(tracksObservation: false)
            scheduler.turn()
            XCTAssertEqual(untracked.renders, ["Draft:n"])
            try scheduler.expectIdle()
        }
    }

    func testChangesInOneCycleCallUpdateViewOnceWithTheRulesFlag() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView()
            for i in 0..<50 { controller.title = "t\(i)" }
            scheduler.turn()
            XCTAssertEqual(controller.renders, [":n", "t49:n"])
            controller.isStarred = true  // @NeedsUpdate(animated: true)
            controller.title = "x"
            scheduler.turn()
            XCTAssertEqual(controller.renders.last, "x*:a")
            XCTAssertEqual(controller.renders.count, 3)
            scheduler.turn()
            XCTAssertEqual(controller.renders.count, 3, "no request, no call")
        }
    }

    func testSetNeedsUpdateAndUpdateViewIfNeededOnTheObject() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView()
            controller.setNeedsUpdate(animated: true)
            controller.setNeedsUpdate()
            XCTAssertEqual(controller.renders.count, 1)
            controller.updateViewIfNeeded()
            XCTAssertEqual(controller.renders, [":n", ":a"])
            controller.updateViewIfNeeded()
            scheduler.turn()
            XCTAssertEqual(controller.renders.count, 2, "updateViewIfNeeded with nothing pending renders nothing")
        }
    }

    func testASecondStartDoesNotRegisterTwice() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView()
            controller.startUpdatingView()
            XCTAssertEqual(controller.updateContext.updaterCount, 1)
            XCTAssertEqual(controller.renders.count, 1)
            controller.title = "a"
            scheduler.turn()
            XCTAssertEqual(controller.renders, [":n", "a:n"])
        }
    }

    /// The registration is weak: the context (kept alive from outside here) never keeps the object, and a
    /// released object is never called.
    func testTheContextDoesNotKeepTheObjectAlive() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            var controller: ArticleController? = ArticleController(scheduler: scheduler)
            let context = controller!.updateContext
            weak let weakController = controller
            controller!.startUpdatingView()
            controller!.title = "pending"
            controller = nil
            XCTAssertNil(weakController, "startUpdatingView must not make the context retain its owner")
            context.setNeedsUpdate()
            scheduler.turn()  // delivers to the weak registration of a released object: nothing happens
            XCTAssertEqual(context.updaterCount, 1)
        }
    }

    func testStopByRemovingTheUpdaters() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView()
            controller.updateContext.removeUpdaters()
            controller.title = "gone"
            scheduler.turn()
            XCTAssertEqual(controller.renders, [":n"])
        }
    }

    /// `startUpdatingView()` after `removeUpdaters()` starts again: it renders at once, and later changes
    /// render once per cycle (a second start while connected still does nothing).
    func testStartAgainAfterRemovingTheUpdatersRendersAgain() throws {
        let scheduler = scheduler!
        try MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView()
            try scheduler.runUntilIdle()
            controller.updateContext.removeUpdaters()
            controller.title = "while stopped"
            try scheduler.runUntilIdle()
            controller.renders.removeAll()
            controller.startUpdatingView()
            XCTAssertEqual(controller.renders, ["while stopped:n"], "the restart renders at once")
            try scheduler.runUntilIdle()
            controller.renders.removeAll()
            controller.startUpdatingView()
            XCTAssertEqual(controller.updateContext.updaterCount, 1, "connected once")
            controller.title = "b"
            scheduler.turn()
            XCTAssertEqual(controller.renders, ["b:n"])
            try scheduler.expectIdle()
        }
    }

    /// `removeUpdaters()` on another thread racing `startUpdatingView()` leaves the object connected once or
    /// not at all: a later `startUpdatingView()` then makes it connected once, never twice.
    func testRemovalRacingAStartNeverConnectsTheObjectTwice() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            for round in 0..<5_000 {
                let controller = ArticleController(scheduler: scheduler)
                let context = controller.updateContext
                let go = DispatchSemaphore(value: 0)
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    go.wait()
                    context.removeUpdaters()
                    done.signal()
                }
                go.signal()
                controller.startUpdatingView()
                done.wait()
                controller.startUpdatingView()
                if context.updaterCount != 1 {
                    return XCTFail("round \(round): \(context.updaterCount) updaters after a start")
                }
            }
        }
    }

    /// `expectIdle()` passes once everything requested has been delivered, however it was delivered: by
    /// `updateViewIfNeeded()` or `update()` before the end of the cycle, too.
    func testExpectIdlePassesAfterAnImmediateDeliveryOfEverythingPending() throws {
        let scheduler = scheduler!
        try MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView(tracksObservation: false)
            controller.title = "now"
            controller.updateViewIfNeeded()
            XCTAssertEqual(controller.renders, [":n", "now:n"])
            XCTAssertNoThrow(try scheduler.expectIdle(), "everything requested was delivered")
            controller.title = "again"
            controller.updateContext.update()
            XCTAssertNoThrow(try scheduler.expectIdle())
            controller.title = "pending"
            XCTAssertThrowsError(try scheduler.expectIdle(), "a change waits for its turn")
            scheduler.turn()
            XCTAssertEqual(controller.renders, [":n", "now:n", "again:n", "pending:n"])
            try scheduler.expectIdle()
            // An update held by a suspended context waits for resume(), not a turn: idle, in either order.
            controller.title = "held"
            controller.updateContext.suspend()
            XCTAssertNoThrow(try scheduler.expectIdle())
            controller.updateContext.resume()
            XCTAssertEqual(controller.renders.last, "held:n")
            controller.updateContext.suspend()
            controller.title = "held again"
            XCTAssertNoThrow(try scheduler.expectIdle())
            controller.updateContext.resume()
            XCTAssertEqual(controller.renders.last, "held again:n")
            try scheduler.expectIdle()
        }
    }

    /// A million requests over a thousand cycles: one call per cycle, the last one at the end.
    func testAMillionRequestsCallOncePerCycle() {
        let scheduler = scheduler!
        MainActor.assumeIsolated {
            let controller = ArticleController(scheduler: scheduler)
            controller.startUpdatingView()
            for cycle in 0..<1_000 {
                for i in 0..<1_000 { controller.title = "\(cycle).\(i)" }
                scheduler.turn()
            }
            XCTAssertEqual(controller.renders.count, 1_001)
            XCTAssertEqual(controller.renders.last, "999.999:n")
        }
    }
}
