import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// UIKit 26's update-properties pass, in the logic Linux runs: the context of `makeForUpdatePropertiesPass()`
/// (`passContext`), its binding (what `startUpdatingView()` on a view or view controller, and
/// `deliverInUpdateProperties(of:)`, make of `setNeedsUpdateProperties()` and the view's window), and the
/// main-queue fallback. UIKit is played by the test: "asking for the pass" queues a main-queue block that
/// runs the view's `updateProperties()` — or does not, when the test's view forgot to override it.
final class PropertiesPassBindingTests: XCTestCase {
    /// A view as the pass sees it: whether it is in a window, whether its `updateProperties()` override calls
    /// `updateViewIfNeeded()`, and what UIKit asked of it. Main thread only.
    private final class FakeView: @unchecked Sendable {
        // @unchecked Sendable: touched on the main thread only (the test, the pass requests, the updaters).
        var isInWindow = true
        var overridesUpdateProperties = true
        var passesAsked = 0
        var passesRun = 0
        var shown: [Int] = []
        weak var context: ViewUpdatingContext?

        /// `setNeedsUpdateProperties()`: UIKit runs the pass at the end of this run-loop pass, for a view in a
        /// window.
        func setNeedsUpdateProperties() {
            passesAsked += 1
            guard isInWindow else { return }
            DispatchQueue.main.async { [self] in
                passesRun += 1
                if overridesUpdateProperties { context?.updateIfNeeded() }
            }
        }
    }

    private var recorder: ReportRecorder!

    override func setUp() {
        recorder = ReportRecorder()
    }

    override func tearDown() {
        recorder.stop()
    }

    /// Four passes of the main run loop, then until `done` (bounded: the fallback is main-queue hops away, and
    /// a loaded machine or a sanitizer may need more passes).
    private func spinMainQueue(until done: () -> Bool) {
        for _ in 0..<4 { RunLoop.main.run(until: Date()) }
        spinMainLoop(timeout: 10, until: done)
    }

    /// A pass context bound to `view` as `startUpdatingView()` binds it, rendering `model` into `view.shown`.
    private func boundContext(
        _ label: String, view: FakeView, model: NotificationCoalescing.Locked<Int>
    ) -> ViewUpdatingContext {
        let context = ViewUpdatingContext.passContext(label: label, animated: false, refreshEvents: [])
        view.context = context
        XCTAssertTrue(
            context.bindPass(
                { view.setNeedsUpdateProperties() }, isInWindow: { view.isInWindow }, onlyIfUnbound: true))
        context.onUpdate { _ in view.shown.append(model.withLock { $0 }) }
        return context
    }

    func testABoundViewInAWindowIsDeliveredInsideItsPassAndNothingIsReported() {
        let view = FakeView()
        let model = NotificationCoalescing.Locked(0)
        let context = boundContext("in the pass", view: view, model: model)
        for value in 1...3 {
            model.withLock { $0 = value }
            context.setNeedsUpdate()
            context.setNeedsUpdate()
            spinMainQueue { view.shown.count >= value }
        }
        XCTAssertEqual(view.shown, [1, 2, 3], "one delivery per cycle, inside the pass, showing the cycle's value")
        XCTAssertEqual(view.passesRun, 3)
        XCTAssertTrue(recorder.reports(label: "in the pass").isEmpty)
    }

    /// The third wiring point left out: the view is in a window, UIKit runs its pass, but `updateProperties()`
    /// does not deliver. The fallback still delivers (the view ends showing the model), and that is reported,
    /// once per context, always on, naming the fix.
    func testAViewInAWindowWhoseUpdatePropertiesDoesNotDeliverIsReportedOnce() {
        let view = FakeView()
        view.overridesUpdateProperties = false
        let model = NotificationCoalescing.Locked(0)
        let context = boundContext("no override", view: view, model: model)
        for value in 1...3 {
            model.withLock { $0 = value }
            context.setNeedsUpdate()
            spinMainQueue { view.shown.count >= value }
        }
        XCTAssertEqual(view.shown, [1, 2, 3], "the fallback delivers each cycle")
        let reports = recorder.reports(label: "no override", kind: .missedPropertiesPass)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("updateViewIfNeeded()") == true, "\(reports)")
        XCTAssertTrue(recorder.reports(label: "no override", kind: .unboundPropertiesPass).isEmpty)
        withExtendedLifetime(context) {}
    }

    /// A view in no window gets no pass: the fallback is the designed path there, and says nothing.
    func testAViewInNoWindowIsDeliveredByTheFallbackWithoutAReport() {
        let view = FakeView()
        view.isInWindow = false
        let model = NotificationCoalescing.Locked(0)
        let context = boundContext("off screen", view: view, model: model)
        model.withLock { $0 = 7 }
        context.setNeedsUpdate()
        spinMainQueue { !view.shown.isEmpty }
        XCTAssertEqual(view.shown, [7])
        XCTAssertEqual(view.passesAsked, 1)
        XCTAssertTrue(recorder.reports(label: "off screen").isEmpty)
        // In a window later, without the override: reported then (the first miss where UIKit runs the pass).
        view.isInWindow = true
        view.overridesUpdateProperties = false
        context.setNeedsUpdate()
        // The fallback is two main-queue hops away: spun until it reported (a loaded machine, a sanitizer,
        // may need more than a few passes of the loop).
        spinMainLoop(timeout: 10) { self.recorder.reports(label: "off screen", kind: .missedPropertiesPass).count >= 1 }
        XCTAssertEqual(recorder.reports(label: "off screen", kind: .missedPropertiesPass).count, 1)
    }

    /// `startUpdatingView()`'s binding does not replace one made before (`deliverInUpdateProperties(of:)` for
    /// another view), and an explicit binding replaces it.
    func testTheOwnersBindingNeverReplacesAnExplicitOneAndAnExplicitOneReplacesIt() {
        let owner = FakeView()
        let other = FakeView()
        let context = ViewUpdatingContext.passContext(label: "explicit", animated: false, refreshEvents: [])
        owner.context = context
        other.context = context
        context.onUpdate { _ in }
        XCTAssertTrue(context.bindPass({ other.setNeedsUpdateProperties() }, isInWindow: { other.isInWindow }))
        XCTAssertFalse(
            context.bindPass(
                { owner.setNeedsUpdateProperties() }, isInWindow: { owner.isInWindow }, onlyIfUnbound: true))
        context.setNeedsUpdate()
        spinMainQueue { other.passesAsked >= 1 }
        XCTAssertEqual([owner.passesAsked, other.passesAsked], [0, 1])
        XCTAssertTrue(context.bindPass({ owner.setNeedsUpdateProperties() }, isInWindow: { owner.isInWindow }))
        context.setNeedsUpdate()
        spinMainQueue { owner.passesAsked >= 1 }
        XCTAssertEqual([owner.passesAsked, other.passesAsked], [1, 1])
        // A context made otherwise has no pass to bind.
        let ordinary = ViewUpdatingContext(refreshEvents: [])
        XCTAssertFalse(ordinary.bindPass({}, isInWindow: { true }, onlyIfUnbound: true))
    }

    /// Unbound, the report says how to bind: `startUpdatingView()` from the view, or `deliverInUpdateProperties`.
    func testTheUnboundReportNamesBothWaysToBind() {
        let context = ViewUpdatingContext.passContext(label: "never bound", animated: false, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        context.setNeedsUpdate()
        spinMainQueue { deliveries >= 1 }
        XCTAssertEqual(deliveries, 1)
        let message = recorder.reports(label: "never bound", kind: .unboundPropertiesPass).first?.message ?? ""
        XCTAssertTrue(message.contains("startUpdatingView()"), message)
        XCTAssertTrue(message.contains("deliverInUpdateProperties(of:)"), message)
        XCTAssertTrue(
            recorder.reports(label: "never bound", kind: .missedPropertiesPass).isEmpty,
            "an unbound context has no window to be in")
    }

    /// A binding's closures are released outside the binding's lock: one whose release calls back into the
    /// binding (a replaced binding's captured object whose `deinit` binds again) neither deadlocks nor is lost.
    func testAReplacedBindingsReleaseMayBindAgain() {
        final class Rebinder: @unchecked Sendable {
            // @unchecked Sendable: made and released on the test's thread.
            let context: ViewUpdatingContext
            init(_ context: ViewUpdatingContext) { self.context = context }
            deinit { context.bindPass({}, isInWindow: { false }) }
        }
        let context = ViewUpdatingContext.passContext(label: "rebinding", animated: false, refreshEvents: [])
        do {
            let rebinder = Rebinder(context)
            context.bindPass({ _ = rebinder }, isInWindow: { false })
        }
        XCTAssertTrue(context.bindPass({}, isInWindow: { false }), "replacing releases the rebinder, which binds")
        XCTAssertFalse(context.bindPass({}, isInWindow: { false }, onlyIfUnbound: true), "still bound")
    }
}
