import CMallocStats
import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// A tracked updater that delivers a tracked child inside its own run more than once (a screen that sets
/// two of its card's `@NeedsUpdate` properties, each followed by the card's `updateViewIfNeeded()`), or that
/// releases the child there (a list dropping a cell mid-render). Observation merges every tracking the child
/// installs in the parent's run into the parent's, the child's retirement bookkeeping included. What the
/// outside review of the 0.3.0 fixes proved, each written first to fail on 343037c: three child deliveries in
/// one parent run looped forever (N1); two left one child tracking per parent run on the model, never retired
/// (N2); the second child delivery fired the tracking the parent keeps for its write-backs, which were lost
/// (N3), and so did a child released inside the parent's run (N4).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class NestedTrackedUpdaterTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var recorder: ReportRecorder!
    private var model: AccountModel!

    override func setUp() {
        scheduler = ManualScheduler()
        recorder = ReportRecorder()
        model = AccountModel()
    }

    override func tearDown() {
        recorder.stop()
    }

    /// Turns until nothing is pending, at most `limit` times; returns the turns taken.
    private func settle(_ contexts: [ViewUpdatingContext], limit: Int = 50) -> Int {
        scheduler.settle(contexts, limit: limit)
    }

    // MARK: N1: settles

    /// A parent that renders its child three times in one run settles when nothing changes, and both still
    /// hear what they read.
    func testAParentThatRendersItsTrackedChildThreeTimesSettles() {
        let model = model!
        let inner = ViewUpdatingContext(label: "inner", scheduler: scheduler, refreshEvents: [])
        let outer = ViewUpdatingContext(label: "outer", scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        inner.onTrackedUpdate { _ in shown.append("inner \(model.mood)") }
        outer.onTrackedUpdate { _ in
            shown.append("outer \(model.count)")
            for _ in 0..<3 { inner.update() }
        }
        XCTAssertLessThan(settle([outer, inner]), 5, "nothing changed: \(shown.entries.count) renders")
        for times in 1...3 {
            model.count = times
            XCTAssertLessThan(settle([outer, inner]), 5, "after count = \(times)")
            XCTAssertEqual(shown.entries.filter { $0.hasPrefix("outer") }.last, "outer \(times)")
            model.mood = times + 10
            XCTAssertLessThan(settle([outer, inner]), 5, "after mood = \(times + 10)")
            XCTAssertEqual(shown.entries.filter { $0.hasPrefix("inner") }.last, "inner \(times + 10)")
        }
        XCTAssertEqual(recorder.reports(label: "outer", kind: .updateLoop).count, 0)
        XCTAssertEqual(recorder.reports(label: "inner", kind: .updateLoop).count, 0)
    }

    /// The canonical path: a screen sets three of its card's `@NeedsUpdate` properties, each followed by the
    /// card's `updateViewIfNeeded()`; after a change of the model, both settle, showing it.
    func testAScreenThatRendersItsCardAfterEachOfThreePropertiesSettles() {
        let screen = CardScreen(scheduler: scheduler, model: model)
        onMainActor(screen) {
            $0.card.startUpdatingView()
            $0.startUpdatingView()
        }
        let contexts = [screen.updateContext, screen.card.updateContext]
        XCTAssertLessThan(settle(contexts), 5)
        model.count = 1
        XCTAssertLessThan(settle(contexts), 5, "screen rendered \(screen.renders) times")
        XCTAssertEqual(screen.card.shown.last, "n1 s1 1 mood 1")
        model.mood = 2
        XCTAssertLessThan(settle(contexts), 5)
        XCTAssertEqual(screen.card.shown.last, "n1 s1 1 mood 2")
    }

    // MARK: N2: nothing kept

    /// A live screen whose card is rendered twice per screen render: memory does not grow per render (each of
    /// the card's trackings is retired; before, one per screen render stayed on the model until `mood` changed).
    func testMemoryDoesNotGrowPerRenderWhenAChildIsRenderedTwicePerRun() {
        let model = model!
        let card = ViewUpdatingContext(label: "card", scheduler: scheduler, refreshEvents: [])
        let screen = ViewUpdatingContext(label: "screen", scheduler: scheduler, refreshEvents: [])
        card.onTrackedUpdate { _ in _ = model.mood }
        screen.onTrackedUpdate { _ in
            _ = model.count
            card.setNeedsUpdate()
            card.updateIfNeeded()
            card.setNeedsUpdate()
            card.updateIfNeeded()
        }
        func render(_ times: Int) {
            for _ in 0..<times {
                model.count += 1
                _ = settle([screen, card])
            }
        }
        render(200)
        let before = malloc_stats_bytes_in_use()
        render(3000)
        let perRender = (Int(malloc_stats_bytes_in_use()) - Int(before)) / 3000
        XCTAssertLessThan(perRender, 64, "memory grows \(perRender) bytes per render")
    }

    /// Released screens whose parent rendered the child twice leave nothing on the long-lived model: both
    /// contexts' links (which every registration of theirs holds) are freed.
    func testReleasedScreensWhoseParentRenderedTheChildTwiceLeaveNothing() {
        let model = model!
        var links: [() -> UpdateStorage?] = []
        for childFirst in [true, false] {
            var inner: ViewUpdatingContext? = ViewUpdatingContext(
                label: "inner", scheduler: scheduler, refreshEvents: [])
            var outer: ViewUpdatingContext? = ViewUpdatingContext(
                label: "outer", scheduler: scheduler, refreshEvents: [])
            inner!.onTrackedUpdate { _ in _ = model.mood }
            outer!.onTrackedUpdate { [unowned inner = inner!] _ in
                inner.update()
                inner.update()
                _ = model.count
            }
            XCTAssertLessThan(settle([outer!, inner!]), 5)
            outer!.setNeedsUpdate()
            XCTAssertLessThan(settle([outer!, inner!]), 5)
            let innerLink = inner!.storage
            let outerLink = outer!.storage
            links += [{ [weak innerLink] in innerLink }, { [weak outerLink] in outerLink }]
            if childFirst {
                inner = nil
                outer = nil
            } else {
                outer = nil
                inner = nil
            }
        }
        _ = try? scheduler.runUntilIdle()  // the scheduler forgets the released contexts it had listed
        for (index, link) in links.enumerated() {
            XCTAssertNil(link(), "link #\(index) is still held by the model's registrations")
        }
    }

    // MARK: N3, N4: the parent's write-back

    /// A parent that renders its child twice, then writes back what it read: the write-back is heard and the
    /// view ends showing the model.
    func testAParentWriteBackAfterRenderingItsChildTwiceIsHeard() {
        let model = model!
        let inner = ViewUpdatingContext(label: "inner", scheduler: scheduler, refreshEvents: [])
        let outer = ViewUpdatingContext(label: "outer", scheduler: scheduler, refreshEvents: [])
        let shown = SharedLog()
        inner.onTrackedUpdate { _ in _ = model.mood }
        outer.onTrackedUpdate { _ in
            inner.update()
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

    /// A parent that releases its child inside its run (after rendering it), then writes back what it read, in
    /// a delivery no tracked change caused: the write-back is heard.
    func testAParentWriteBackAfterReleasingItsChildInsideItsRunIsHeard() {
        let model = model!
        let outer = ViewUpdatingContext(label: "outer", scheduler: scheduler, refreshEvents: [])
        var inner: ViewUpdatingContext? = ViewUpdatingContext(label: "inner", scheduler: scheduler, refreshEvents: [])
        inner!.onTrackedUpdate { _ in _ = model.mood }
        weak let innerLink = inner!.storage
        let shown = SharedLog()
        var runs = 0
        outer.onTrackedUpdate { _ in
            runs += 1
            inner?.update()
            if runs == 2 { inner = nil }  // the cell goes
            let count = model.count
            shown.append("\(count)")
            if runs >= 2 && count < 2 { model.count = count + 1 }
        }
        XCTAssertLessThan(settle([outer]), 10)
        outer.setNeedsUpdate()  // the second run: no tracked change caused it
        XCTAssertLessThan(settle([outer]), 10)
        XCTAssertEqual(model.count, 2)
        XCTAssertEqual(shown.entries.last, "2", "the view ends showing the model: \(shown.entries)")
        model.name = "later"
        XCTAssertLessThan(settle([outer]), 5)
        XCTAssertNil(innerLink, "the released child's trackings went with the parent's next delivery")
    }
}

/// A tracked child rendered inside its parent's tracked run (Observation merges the child's reads into the
/// parent's tracking): what the child read is heard, and the child tracks on its own again once its parent stops
/// rendering it.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class NestedTrackedChildTests: XCTestCase {
    /// A child started inside its parent's render, then a parent render that does not render it (nothing
    /// pending for it): a later change to what the child read is still shown.
    func testAChildTheParentStopsRenderingTracksOnItsOwnAgain() throws {
        try MainActor.assumeIsolated {
            let scheduler = ManualScheduler()
            let model = AccountModel()
            let parent = ParentScreen(scheduler: scheduler, model: model)
            parent.startUpdatingView()
            XCTAssertEqual(parent.child?.shown, 1)
            parent.title = "new"  // the parent renders again, for a reason of its own
            try scheduler.runUntilIdle()
            model.mood = 5  // what the child read, changed on the main actor
            try scheduler.runUntilIdle()
            XCTAssertEqual(parent.child?.shown, 5, "the child shows the change")
            // And when the parent goes, the child still hears what it reads.
            parent.updateContext.removeUpdaters()
            try scheduler.runUntilIdle()
            model.mood = 6
            try scheduler.runUntilIdle()
            XCTAssertEqual(parent.child?.shown, 6)
        }
    }

    /// A child's updater removed: a change to what it read requests nothing of the child (the parent's tracking
    /// heard it, and asks only for updaters still registered).
    func testARemovedChildUpdaterIsNotRequestedByItsParent() throws {
        let scheduler = ManualScheduler()
        let model = AccountModel()
        let child = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        var childCalls = 0
        parent.onTrackedUpdate { _ in
            _ = model.count
            child.updateIfNeeded()
        }
        let token = child.onTrackedUpdate { _ in
            _ = model.mood
            childCalls += 1
        }
        scheduler.turn()
        XCTAssertEqual(childCalls, 1)
        token.remove()
        model.mood = 5
        XCTAssertFalse(child.isUpdatePending, "the removed updater's context was requested")
        try scheduler.runUntilIdle()
    }

    /// A child rendered inside its parent hears a change made on another thread once more in the next cycle, as
    /// a context alone does: the view ends showing the value a writer stored right after the first delivery.
    func testAChildHearsAnOffMainChangeOnceMoreInTheNextCycle() throws {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        let scheduler = ManualScheduler()
        let model = GatedValue()
        let child = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        var childShown = -1
        parent.onTrackedUpdate { _ in child.updateIfNeeded() }
        child.onTrackedUpdate { _ in childShown = model.value }
        scheduler.turn()
        XCTAssertEqual(childShown, 0)
        let reported = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let stored = DispatchSemaphore(value: 0)
        model.beforeStore = {
            reported.signal()
            release.wait()
        }
        Thread.detachNewThread {
            model.value = 7
            stored.signal()
        }
        reported.wait()
        scheduler.turn()  // delivered when reported: may show the value before it (documented)
        release.signal()
        stored.wait()
        try scheduler.runUntilIdle()
        XCTAssertEqual(childShown, 7, "the follow-up shows the stored value")
    }

    /// A child's write-back, in a delivery its parent forced and no tracked change caused, is heard by the child's
    /// tracking from before: delivered again, and reported once.
    func testAChildsWriteBackInsideItsParentIsHeard() throws {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        let scheduler = ManualScheduler()
        let model = AccountModel()
        let child = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        var childRuns = 0
        var childShown = -1
        var showsChild = false
        child.onTrackedUpdate { _ in
            childRuns += 1
            childShown = model.mood
            if childRuns == 2 { model.mood = 42 }
        }
        scheduler.turn()  // the child alone: it tracks on its own
        parent.onTrackedUpdate { _ in
            _ = model.count
            if showsChild { child.update() }
        }
        scheduler.turn()
        showsChild = true
        parent.setNeedsUpdate()
        scheduler.turn()  // the child's second delivery, forced inside the parent
        XCTAssertEqual(childRuns, 2)
        try scheduler.runUntilIdle()
        XCTAssertEqual(childShown, 42, "the view ends showing the model")
        XCTAssertEqual(recorder.reports(label: "child", kind: .writeBack).count, 1)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension NestedTrackedChildTests {
    /// Two levels: a change to what a grandchild read (delivered inside its parent, itself delivered inside
    /// the outer updater) requests the grandchild too, in the cycle of the change.
    func testAChangeAGrandchildReadRequestsIt() throws {
        let scheduler = ManualScheduler()
        let model = AccountModel()
        let outer = ViewUpdatingContext(label: "outer", scheduler: scheduler, refreshEvents: [])
        let middle = ViewUpdatingContext(label: "middle", scheduler: scheduler, refreshEvents: [])
        let inner = ViewUpdatingContext(label: "inner", scheduler: scheduler, refreshEvents: [])
        var shown: [Int] = []
        inner.onTrackedUpdate { _ in shown.append(model.mood) }
        middle.onTrackedUpdate { _ in inner.update() }
        outer.onTrackedUpdate { _ in middle.update() }
        try scheduler.runUntilIdle()
        outer.setNeedsUpdate()
        try scheduler.runUntilIdle()
        model.mood = 9
        XCTAssertTrue(inner.isUpdatePending, "a change to what it read requests it")
        scheduler.turn()
        XCTAssertEqual(shown.last, 9)
        try scheduler.runUntilIdle()
    }

    /// A child released after its parent rendered it inside its run is freed at once: the parent's tracking
    /// (which the model holds) keeps nothing of it.
    func testAReleasedChildIsNotKeptByItsParentsTracking() throws {
        let scheduler = ManualScheduler()
        let model = AccountModel()
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        var child: ViewUpdatingContext? = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        weak let childLink = child!.storage
        child!.onTrackedUpdate { _ in _ = model.mood }
        parent.onTrackedUpdate { _ in child?.update() }
        try scheduler.runUntilIdle()
        parent.setNeedsUpdate()
        try scheduler.runUntilIdle()  // the child ran inside the parent's run
        child = nil
        XCTAssertNil(childLink, "the child's link is freed with it")
        try scheduler.runUntilIdle()
        withExtendedLifetime((parent, model)) {}
    }
}

/// A screen that starts its child screen inside its own render, and renders it there.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
private final class ParentScreen: ViewUpdating {
    final class Child: ViewUpdating {
        let updateContext: ViewUpdatingContext
        let model: AccountModel
        var shown = -1
        init(scheduler: ManualScheduler, model: AccountModel) {
            updateContext = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
            self.model = model
        }
        func updateView(animated: Bool) { shown = model.mood }
    }

    let updateContext: ViewUpdatingContext
    let scheduler: ManualScheduler
    let model: AccountModel
    @NeedsUpdate var title = ""
    var child: Child?

    init(scheduler: ManualScheduler, model: AccountModel) {
        updateContext = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        self.scheduler = scheduler
        self.model = model
    }

    func updateView(animated: Bool) {
        _ = title
        if child == nil {
            let child = Child(scheduler: scheduler, model: model)
            self.child = child
            child.startUpdatingView()
        }
        child?.updateViewIfNeeded()
    }
}

/// A card whose screen sets three of its `@NeedsUpdate` properties, rendering it after each.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class CardView: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread only.
    let updateContext: ViewUpdatingContext
    let model: AccountModel
    @NeedsUpdate var title = ""
    @NeedsUpdate var subtitle = ""
    @NeedsUpdate var badge = 0
    var shown: [String] = []

    init(scheduler: ManualScheduler, model: AccountModel) {
        updateContext = ViewUpdatingContext(label: "card", scheduler: scheduler, refreshEvents: [])
        self.model = model
    }

    func updateView(animated: Bool) {
        shown.append("\(title) \(subtitle) \(badge) mood \(model.mood)")
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class CardScreen: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread only.
    let updateContext: ViewUpdatingContext
    let model: AccountModel
    let card: CardView
    var renders = 0

    init(scheduler: ManualScheduler, model: AccountModel) {
        updateContext = ViewUpdatingContext(label: "screen", scheduler: scheduler, refreshEvents: [])
        self.model = model
        card = CardView(scheduler: scheduler, model: model)
    }

    func updateView(animated: Bool) {
        renders += 1
        card.title = "n\(model.count)"
        card.updateViewIfNeeded()
        card.subtitle = "s\(model.count)"
        card.updateViewIfNeeded()
        card.badge = model.count
        card.updateViewIfNeeded()
    }
}
