import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The tracked updater's edges: a tracked updater that delivers another tracked context inside itself settles
/// (no endless loop, no write-back blamed on it), a task's tracked change after a plain one in the same cycle
/// (the stated limit, and its remedy), an animated `modify` that changes nothing renders nothing early, and an
/// updater that removes itself while it runs requests nothing afterwards.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class TrackedUpdaterEdgeTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var recorder: ReportRecorder!

    override func setUp() {
        scheduler = ManualScheduler()
        recorder = ReportRecorder()
    }

    override func tearDown() {
        recorder.stop()
    }

    /// Turns until nothing is pending, at most `limit` times; returns the turns taken.
    private func settle(_ contexts: [ViewUpdatingContext], limit: Int = 50) -> Int {
        scheduler.settle(contexts, limit: limit)
    }

    // MARK: Nested deliveries

    /// A parent that renders its child at once (`child.update()`) reads what the child read, the child's own
    /// bookkeeping included (Observation merges a nested tracking into the one around it): the child retiring
    /// its tracking must not look like the parent changing what it read.
    func testAParentThatRendersATrackedChildAtOnceSettlesWhenNothingChanges() {
        let model = AccountModel()
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        let child = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        child.onTrackedUpdate { _ in shown.append("child \(model.mood)") }
        parent.onTrackedUpdate { _ in
            shown.append("parent \(model.name)")
            child.update()
        }
        XCTAssertLessThan(settle([parent, child]), 5, "nothing changed: \(shown.entries.count) renders")
        XCTAssertEqual(recorder.reports(label: "parent", kind: .updateLoop).count, 0, "the parent writes nothing")
        // Still tracked, both: a change to what each read is shown, and settles.
        shown.removeAll()
        model.name = "b"
        XCTAssertLessThan(settle([parent, child]), 5)
        XCTAssertEqual(shown.entries.filter { $0.hasPrefix("parent") }.last, "parent b")
        model.mood = 2
        XCTAssertLessThan(settle([parent, child]), 5)
        XCTAssertEqual(shown.entries.filter { $0.hasPrefix("child") }.last, "child 2")
        XCTAssertEqual(recorder.reports(label: "parent", kind: .updateLoop).count, 0)
        XCTAssertEqual(recorder.reports(label: "child", kind: .updateLoop).count, 0)
    }

    /// The child delivered by itself retires the tracking the parent merged: the parent, whose tracking that
    /// spent, is delivered once more (to track again) and then still hears its own model.
    func testAChildDeliveredAloneLeavesTheParentTracking() {
        let model = AccountModel()
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        let child = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        child.onTrackedUpdate { _ in shown.append("child \(model.mood)") }
        parent.onTrackedUpdate { _ in
            shown.append("parent \(model.name)")
            child.updateIfNeeded()
        }
        XCTAssertLessThan(settle([parent, child]), 5)
        child.update()  // alone
        XCTAssertLessThan(settle([parent, child]), 5)
        shown.removeAll()
        model.name = "c"
        XCTAssertLessThan(settle([parent, child]), 5)
        XCTAssertEqual(shown.entries.filter { $0.hasPrefix("parent") }.last, "parent c", "the parent still hears")
        XCTAssertEqual(recorder.reports(label: "parent", kind: .updateLoop).count, 0)
    }

    /// The release of a child context whose tracking a parent merged delivers nothing inside the release.
    func testReleasingANestedChildDeliversNothingInsideTheRelease() {
        let model = AccountModel()
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        var child: ViewUpdatingContext? = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        child?.onTrackedUpdate { _ in shown.append("child \(model.mood)") }
        let weakChild = { [weak child] in child }
        parent.onTrackedUpdate { _ in
            shown.append("parent \(model.name)")
            weakChild()?.update()
        }
        XCTAssertLessThan(settle([parent, child!]), 5)
        shown.removeAll()
        withUpdateAnimation { child = nil }
        XCTAssertEqual(shown.entries, [], "nothing delivered inside the release")
        XCTAssertLessThan(settle([parent]), 5)
        model.name = "d"
        XCTAssertLessThan(settle([parent]), 5)
        XCTAssertEqual(shown.entries.last, "parent d")
    }

    // MARK: A task's change after a plain one

    /// Load then animate, with a plain change to what the same updater read landing first in that cycle: that
    /// change spent the tracking, so the task's change requests nothing (the stated limit): the pending delivery
    /// shows it unanimated, and the scope's completion is told "nothing requested" once. The remedy — a request
    /// in the task after its change, which carries the task's scope — animates it and completes "shown".
    func testATaskLandingAfterAPlainTrackedChangeIsShownByThePlainDeliveryUnlessItRequests() {
        for remedy in [false, true] {
            taskLandingAfterAPlainTrackedChange(requestsAfterItsChange: remedy)
        }
    }

    private func taskLandingAfterAPlainTrackedChange(requestsAfterItsChange: Bool) {
        let model = AccountModel()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        context.onTrackedUpdate { animated in shown.append("\(model.name) \(model.mood) \(animated ? "a" : "n")") }
        XCTAssertLessThan(settle([context]), 5)
        shown.removeAll()
        let told = SharedLog()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { told.append("\($0) after \(shown.entries.count)") }
        let go = DispatchSemaphore(value: 0)
        let ended = AtomicCounter()
        withUpdateTransaction(transaction) {
            Task { @MainActor in
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        go.wait()
                        continuation.resume()
                    }
                }
                model.mood = 7
                if requestsAfterItsChange { context.setNeedsUpdate() }
                ended.add()
            }
        }
        model.name = "b"  // a plain change, in the cycle the task lands in
        go.signal()
        spinMainLoop { ended.value == 1 }
        scheduler.turn()
        spinMainLoop { !told.entries.isEmpty }
        if requestsAfterItsChange {
            XCTAssertEqual(shown.entries, ["b 7 a"], "one delivery, animated, showing both")
            XCTAssertEqual(told.entries, ["shown(finished: true) after 1"])
        } else {
            XCTAssertEqual(shown.entries, ["b 7 n"], "the plain change's delivery shows both")
            XCTAssertEqual(told.entries.count, 1)
            XCTAssertTrue(told.entries.first?.hasPrefix("dropped(") == true, "\(told.entries)")
        }
    }

    // MARK: An animated modify that changes nothing

    func testAnAnimatedModifyThatChangesNothingRendersNothingEarly() {
        struct Panel: Equatable {
            var title = "a"
            var isExpanded = false
        }
        let context = StateUpdatingContext(state: Panel(), scheduler: scheduler, refreshEvents: [])
        let renders = SharedLog()
        var bodies = 0
        context.onRender { state, _, animated in renders.append("\(state.title) \(animated ? "a" : "n")") }
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        renders.removeAll()
        context.modify(animated: false) { $0.title = "b" }
        context.modify(animated: true) {
            bodies += 1
            $0.isExpanded = false
        }
        XCTAssertEqual(renders.entries, [], "an equal state requests nothing, and flushes nothing")
        XCTAssertEqual(bodies, 1)
        context.modify(animated: false) { $0.title = "c" }
        scheduler.turn()
        XCTAssertEqual(renders.entries, ["c n"], "rendered once in the cycle")
        // A change still flushes first: the pending state renders without animation, then the change animates.
        renders.removeAll()
        context.modify(animated: false) { $0.title = "d" }
        context.modify(animated: true) { $0.isExpanded = true }
        XCTAssertEqual(renders.entries, ["d n"])
        scheduler.turn()
        XCTAssertEqual(renders.entries, ["d n", "d a"])
    }

    // MARK: Removed in its first delivery

    func testAnUpdaterRemovedInItsFirstDeliveryRequestsNothingAfterwards() {
        let model = AccountModel()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let plain = SharedLog()
        context.onUpdate { _ in plain.append("plain") }
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        plain.removeAll()
        let token = NotificationCoalescing.Locked<ViewUpdatingContext.ViewUpdater?>(nil)
        token.withLock {
            $0 = context.onTrackedUpdate { _ in
                _ = model.name
                token.withLock { $0 }?.remove()  // one-shot
            }
        }
        scheduler.turn()
        XCTAssertEqual(plain.entries, ["plain"], "the registration's delivery")
        XCTAssertFalse(context.isUpdatePending, "nothing requests after the removal")
        model.name = "e"
        XCTAssertFalse(context.isUpdatePending, "its tracking is retired")
    }

    /// A one-shot updater that writes back after removing itself requests nothing either.
    func testAnUpdaterRemovedInItsDeliveryThenWritingBackRequestsNothing() {
        let model = AccountModel()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let token = NotificationCoalescing.Locked<ViewUpdatingContext.ViewUpdater?>(nil)
        var runs = 0
        token.withLock {
            $0 = context.onTrackedUpdate { _ in
                runs += 1
                _ = model.count
                if runs == 2 {
                    token.withLock { $0 }?.remove()
                    model.count += 1  // what it read: a write-back, after its removal
                }
            }
        }
        scheduler.turn()  // the first delivery
        context.setNeedsUpdate()
        scheduler.turn()  // the second, which removes it and writes back
        XCTAssertEqual(runs, 2)
        XCTAssertFalse(context.isUpdatePending, "nothing requests after the removal")
    }

    // MARK: A write-back after a child, and removal inside a delivery

    /// A parent that renders its tracked child at once, then writes back what it read: the write-back is heard
    /// (the child's bookkeeping waits until the parent has returned), and the view ends showing the model.
    func testAWriteBackAfterRenderingATrackedChildIsDeliveredAgain() {
        let model = AccountModel()
        let inner = ViewUpdatingContext(label: "inner", scheduler: scheduler, refreshEvents: [])
        let outer = ViewUpdatingContext(label: "outer", scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        inner.onTrackedUpdate { _ in _ = model.mood }
        outer.onTrackedUpdate { _ in
            inner.update()
            let count = model.count
            shown.append("\(count)")
            if count < 2 { model.count = count + 1 }
        }
        XCTAssertLessThan(settle([outer, inner]), 10)
        outer.setNeedsUpdate()  // a delivery a plain request causes: its write-back is heard (not the first's)
        XCTAssertLessThan(settle([outer, inner]), 10)
        XCTAssertEqual(model.count, 2)
        XCTAssertEqual(shown.entries.last, "2", "the view ends showing the model: \(shown.entries)")
    }

    /// A tracked updater removed in a later delivery (no follow-up due, nothing written back): a later updater
    /// of the same delivery that changes what it read requests nothing — the removed updater's closure, and
    /// its tracking, went as its call returned.
    func testATrackedUpdaterRemovedInItsDeliveryRequestsNothingWhenALaterUpdaterChangesWhatItRead() {
        let model = AccountModel()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let removeNow = NotificationCoalescing.Locked(false)
        let token = NotificationCoalescing.Locked<ViewUpdatingContext.ViewUpdater?>(nil)
        token.withLock {
            $0 = context.onTrackedUpdate { _ in
                _ = model.count
                if removeNow.withLock({ $0 }) { token.withLock { $0 }?.remove() }
            }
        }
        context.onUpdate { _ in
            if removeNow.withLock({ $0 }) { model.count += 1 }  // another updater changes the model
        }
        XCTAssertLessThan(settle([context]), 10)
        removeNow.withLock { $0 = true }
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(token.withLock { $0 }?.isActive, false)
        XCTAssertFalse(context.isUpdatePending, "the removed tracked updater requested after its removal")
    }
}
