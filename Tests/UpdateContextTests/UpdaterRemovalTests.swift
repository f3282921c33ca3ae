import CMallocStats
import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// Removal is final (CONTRACT.md): once an updater is removed — by its token, by `removeUpdaters()`,
/// or with its context — it is never called again, not even later in the delivery under way, and what
/// it captured is released at once.
final class UpdaterRemovalTests: XCTestCase {
    private var scheduler: ManualScheduler!

    override func setUp() {
        scheduler = ManualScheduler()
    }

    override func tearDown() {
        XCTAssertNoThrow(try scheduler.expectIdle())
        scheduler = nil
    }

    private final class Canary {}

    func testAnUpdaterRemovedByAnEarlierOneIsNotCalledLaterInTheSameDelivery() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var calls: [Int] = []
        var tokens: [ViewUpdatingContext.ViewUpdater] = []
        tokens.append(
            context.onUpdate { _ in
                calls.append(0)
                tokens[2].remove()
            })
        tokens.append(context.onUpdate { _ in calls.append(1) })
        tokens.append(context.onUpdate { _ in calls.append(2) })
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(calls, [0, 1], "the third was removed by the first, before its turn came")
        context.update()
        XCTAssertEqual(calls, [0, 1, 0, 1])
    }

    func testRemoveUpdatersInsideAnUpdaterStopsTheRestOfTheDelivery() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var calls = 0
        for _ in 0..<6 {
            context.onUpdate { _ in
                calls += 1
                context.removeUpdaters()
            }
        }
        context.update()
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(context.updaterCount, 0)
    }

    func testAContextReleasedInsideItsOwnUpdaterCallsNothingMore() {
        let owner = Owner()
        owner.context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        weak let weakContext = owner.context
        var calls = 0
        for _ in 0..<6 {
            owner.context!.onUpdate { _ in
                calls += 1
                owner.context = nil
            }
        }
        owner.context!.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(calls, 1)
        XCTAssertNil(weakContext)
    }

    func testWhatARemovedUpdaterCapturedIsReleasedAtOnceEvenInTheDeliveryUnderWay() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        weak var weakCanary: Canary?
        var releasedWhenRemoveReturned: Bool?
        var victim: ViewUpdatingContext.ViewUpdater!
        context.onUpdate { _ in
            victim.remove()
            releasedWhenRemoveReturned = weakCanary == nil
        }
        do {
            let canary = Canary()
            weakCanary = canary
            victim = context.onUpdate { _ in withExtendedLifetime(canary) {} }
        }
        context.update()  // a first delivery: any per-delivery copy of the updaters now exists
        XCTAssertEqual(releasedWhenRemoveReturned, true)
    }

    /// An updater that removes itself lets go of what it captured as its call returns, before the next updater
    /// of the delivery runs (the delivery held it until the end: a tracked updater's tracking with it).
    func testAnUpdaterThatRemovesItselfReleasesItsCapturesBeforeTheNextUpdaterRuns() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        weak var weakCanary: Canary?
        var releasedBeforeTheNext: Bool?
        var me: ViewUpdatingContext.ViewUpdater?
        do {
            let canary = Canary()
            weakCanary = canary
            me = context.onUpdate { _ in
                withExtendedLifetime(canary) {}
                me?.remove()
            }
        }
        context.onUpdate { _ in releasedBeforeTheNext = weakCanary == nil }
        context.update()
        XCTAssertEqual(releasedBeforeTheNext, true)
        withExtendedLifetime(me) {}
    }

    /// An updater that removes itself and is slower than a frame lets go of what it captured before the
    /// slow-updater report (user code: the diagnostics handler) runs about it, in every updater position.
    func testAnUpdaterThatRemovesItselfReleasesItsCapturesBeforeItsSlowUpdaterReport() {
        final class Canary: Sendable {
            let released: NotificationCoalescing.Locked<Bool>
            init(_ released: NotificationCoalescing.Locked<Bool>) { self.released = released }
            deinit { released.withLock { $0 = true } }
        }
        for position in 0..<2 {
            let context = ViewUpdatingContext(label: "slow \(position)", scheduler: scheduler, refreshEvents: [])
            if position == 1 { context.onUpdate { _ in } }
            let released = NotificationCoalescing.Locked(false)
            let releasedAtReport = NotificationCoalescing.Locked<Bool?>(nil)
            let previous = UpdateDiagnostics.handler
            UpdateDiagnostics.handler = { report in
                if report.kind == .slowUpdater { releasedAtReport.withLock { $0 = released.withLock { $0 } } }
            }
            defer { UpdateDiagnostics.handler = previous }
            var me: ViewUpdatingContext.ViewUpdater?
            do {
                let canary = Canary(released)
                me = context.onUpdate { [scheduler] _ in
                    withExtendedLifetime(canary) {}
                    me?.remove()
                    scheduler!.advanceClock(by: 0.040)  // this updater "takes" 40 ms
                }
            }
            context.update()  // outside a turn: each updater is timed
            XCTAssertEqual(releasedAtReport.withLock { $0 }, true, "position \(position): released before the report")
            withExtendedLifetime(me) {}
        }
    }

    func testAReleasedContextFreesItsUpdatersAtOnceWithAnUpdatePendingAndItsTokenHeld() {
        weak var weakCanary: Canary?
        var token: ViewUpdatingContext.ViewUpdater?
        do {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let canary = Canary()
            weakCanary = canary
            token = context.onUpdate { _ in withExtendedLifetime(canary) {} }
            context.update()
            context.setNeedsUpdate()
        }
        XCTAssertNil(weakCanary, "freed when the context went, not at the next turn")
        XCTAssertNotNil(token, "even while the token is held")
        scheduler.turn()
        token?.remove()
    }

    func testAnUpdaterAddedDuringADeliveryFirstRunsInTheNextOne() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var calls: [String] = []
        var added = false
        context.onUpdate { _ in
            calls.append("first")
            if !added {
                added = true
                context.onUpdate { _ in calls.append("added") }
            }
        }
        context.update()
        XCTAssertEqual(calls, ["first"])
        context.update()
        XCTAssertEqual(calls, ["first", "first", "added"])
    }

    func testAnUpdaterThatTurnsANestedLoopDuringARefreshFromAnotherThread() {
        let center = NotificationCenter()
        let context = ViewUpdatingContext(scheduler: scheduler, center: center)
        var calls = 0
        context.onUpdate { [scheduler] _ in
            calls += 1
            if calls == 1 {
                context.setNeedsUpdate()  // deferred: updaters are running
                scheduler!.turn()  // a nested loop inside the updater: the context waits for the outer cycle
            }
        }
        onAnotherThread { center.post(name: .applicationWillEnterForeground, object: nil) }
        scheduler.turn()  // applies the refresh in the turn; its delivery runs the nested turn
        XCTAssertEqual(calls, 1, "never recursively")
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(calls, 2, "the request made inside is delivered once, in a later cycle")
    }

    func testRemovalOnAnotherThreadBetweenDeliveries() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let calls = Deliveries()
        let token = context.onUpdate { calls.record($0) }
        context.update()
        onAnotherThread { token.remove() }
        context.update()
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(context.updaterCount, 0)
    }
}

/// How much an idle context costs: one public face, one storage allocation (state machine, inbox, first
/// updater) and its four flag bytes' own, with no lock of its own — within 0.4.0's target (CONTRACT.md: "an
/// idle context ≤ 300 B"), the same as `coalesce-bench`'s.
final class ContextDensityTests: XCTestCase {
    func testAnIdleContextWithOneUpdaterTakesAtMost300Bytes() {
        let count = 10_000
        var contexts: [ViewUpdatingContext] = []
        contexts.reserveCapacity(count)
        let before = malloc_stats_bytes_in_use()
        for _ in 0..<count {
            let context = ViewUpdatingContext(scheduler: .mainRunLoop)  // joins the lifecycle refresh too
            context.onUpdate { _ in }
            contexts.append(context)
        }
        let perContext = (malloc_stats_bytes_in_use() - before) / count
        XCTAssertLessThanOrEqual(perContext, 300, "bytes per idle context with one updater")
        contexts.removeAll()
        XCTAssertLessThan(malloc_stats_bytes_in_use() - before, count * 8, "released contexts free what they held")
    }
}
