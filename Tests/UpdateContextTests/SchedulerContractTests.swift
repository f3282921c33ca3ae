import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// The public scheduler contract, used from outside the package as a user would: no `@testable`.

/// A user-written scheduler: turns when the test says, and counts how often a turn was asked for (each
/// ask is one wake-up of a real loop).
final class CountingScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `asks` is behind `lock`; everything else is the base class's.
    private let lock = NSLock()
    private var _asks = 0

    override var isMainThreadScheduler: Bool { true }

    override func requestTurn(insideTurn: Bool) {
        lock.lock()
        _asks += 1
        lock.unlock()
    }

    var asks: Int {
        lock.lock()
        defer { lock.unlock() }
        return _asks
    }
}

/// A user-written scheduler driven by a main run-loop timer: at most one cycle per tick, whatever the
/// requests in between, and nothing when no turn was asked for.
final class TimerScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `timer`, `ticks` and `turnsWithWork` are touched only on the main thread (the
    // timer fires there; `start`/`stop` are called there).
    private var timer: Timer?
    private(set) var ticks = 0
    private(set) var turnsWithWork = 0

    override var isMainThreadScheduler: Bool { true }
    override var isCurrent: Bool { Thread.isMainThread }

    func start(interval: TimeInterval) {
        let timer = Timer(timeInterval: interval, repeats: true) { [unowned self] _ in
            MainActor.assumeIsolated { tick() }
        }
        RunLoop.main.add(timer, forMode: .common)
        self.timer = timer
    }

    private func tick() {
        ticks += 1
        if runTurn() > 0 { turnsWithWork += 1 }
    }

    func stop() {
        timer?.invalidate()
        timer = nil
    }
}

final class SchedulerContractTests: XCTestCase {
    func testACrossThreadRequestCostsOneTurnAndOneWakeUp() throws {
        let scheduler = CountingScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        onAnotherThread {
            context.setNeedsUpdate(animated: true)
            context.setNeedsUpdate()
        }
        XCTAssertEqual(scheduler.asks, 1, "one wake-up for the batch")
        XCTAssertEqual(scheduler.runTurn(), 1)
        XCTAssertEqual(deliveries.letters, "a", "delivered in the turn that applied it")
        XCTAssertFalse(scheduler.hasPendingWork)
        XCTAssertEqual(scheduler.asks, 1, "no second turn was asked for")
        XCTAssertEqual(scheduler.runTurn(), 0)
    }

    func testOnAManualSchedulerACrossThreadRequestNeedsExactlyOneTurn() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        onAnotherThread { context.setNeedsUpdate() }
        XCTAssertEqual(try scheduler.runUntilIdle(), 1)
        XCTAssertEqual(deliveries.count, 1)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testMainThreadAndCrossThreadRequestsOfOneCycleDeliverOnce() throws {
        let scheduler = CountingScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        context.setNeedsUpdate()
        onAnotherThread { context.setNeedsUpdate(animated: true) }
        scheduler.runTurn()
        XCTAssertEqual(deliveries.letters, "a")
        scheduler.runTurn()
        XCTAssertEqual(deliveries.count, 1)
    }

    func testAUserWrittenTimerSchedulerDrivesAContextOnTheRealMainLoop() {
        let scheduler = TimerScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        scheduler.start(interval: 0.002)
        defer { scheduler.stop() }
        // Requests from the main thread, between ticks; each tick delivers at most once.
        var requested = 0
        spinMainLoop {
            if deliveries.count >= 5 { return true }
            for _ in 0..<10 { context.setNeedsUpdate() }
            requested += 10
            return false
        }
        XCTAssertGreaterThanOrEqual(deliveries.count, 5)
        XCTAssertLessThanOrEqual(deliveries.count, scheduler.ticks, "at most one delivery per tick")
        XCTAssertEqual(deliveries.count, scheduler.turnsWithWork)
        XCTAssertGreaterThan(requested, deliveries.count, "requests coalesced into ticks")
        XCTAssertEqual(deliveries.offMainCount, 0)
        // Idle: ticks go on, but no turn has work and nothing is delivered.
        let delivered = deliveries.count
        let ticks = scheduler.ticks
        spinMainLoop(timeout: 5) { scheduler.ticks >= ticks + 3 }
        XCTAssertEqual(deliveries.count, delivered)
    }

    func testViewUpdatingContextTakesAnySchedulerThatSaysItIsTheMainThreads() {
        XCTAssertTrue(CoalescingScheduler.mainRunLoop.isMainThreadScheduler)
        XCTAssertTrue(CoalescingScheduler.dispatchMain.isMainThreadScheduler)
        XCTAssertTrue(ManualScheduler().isMainThreadScheduler)
        XCTAssertTrue(CountingScheduler().isMainThreadScheduler)
        XCTAssertFalse(CoalescingScheduler().isMainThreadScheduler, "by default a scheduler does not say so")
    }

    func testTheDefaultSchedulerArgumentLetsRefreshEventsBeGivenAlone() {
        // Used not to compile: the full initialiser's `scheduler:` had no default.
        let context = ViewUpdatingContext(refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        NotificationCenter.default.post(name: .applicationWillEnterForeground, object: nil)
        XCTAssertEqual(deliveries.count, 0, "no refresh events observed")
        context.setNeedsUpdate()
        spinMainLoop { deliveries.count == 1 }
        XCTAssertEqual(deliveries.count, 1)
    }

    func testLifecyclePostsFromABackgroundThreadInOneCycleDeliverOnce() throws {
        let scheduler = ManualScheduler()
        let center = NotificationCenter()
        let context = ViewUpdatingContext(scheduler: scheduler, center: center)
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        onAnotherThread {
            center.post(name: .applicationWillEnterForeground, object: nil)
            center.post(name: .applicationWillEnterForeground, object: nil)
        }
        XCTAssertEqual(try scheduler.runUntilIdle(), 1)
        XCTAssertEqual(deliveries.count, 1, "what arrives together collapses")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }
}

/// The contract's initialiser names, as a client writes them.
final class InitialiserNameTests: XCTestCase {
    func testTheSeedsInitialiserAndTheFullOneCoexist() {
        let make: (Bool) -> ViewUpdatingContext = ViewUpdatingContext.init(animated:)
        XCTAssertTrue(make(true).animatesByDefault)
        XCTAssertFalse(ViewUpdatingContext().animatesByDefault)
        XCTAssertTrue(ViewUpdatingContext(animated: true).animatesByDefault)
        let quiet = ViewUpdatingContext(animated: true, refreshEvents: [])
        XCTAssertTrue(quiet.animatesByDefault)
    }
}
