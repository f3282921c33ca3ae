import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// `ViewUpdatingContext` on a manual scheduler (cycles turned by hand) and on the real main run loop.
final class ViewUpdatingContextTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    private var deliveries: Deliveries!

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        deliveries = Deliveries()
        context.onUpdate { [deliveries] in deliveries!.record($0) }
    }

    override func tearDown() {
        if let context, !context.isSuspended {
            XCTAssertFalse(context.isUpdatePending, "left pending")
            XCTAssertNoThrow(try scheduler.expectIdle(), "a turn is still asked for")
        }
        context = nil
        scheduler = nil
    }

    func testManyRequestsOneDeliveryPerCycle() {
        for _ in 0..<1_000 { context.setNeedsUpdate() }
        XCTAssertTrue(context.isUpdatePending)
        XCTAssertEqual(deliveries.count, 0, "nothing before the end of the cycle")
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "n")
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1, "one delivery per dirty cycle, none when clean")
    }

    func testEveryUpdaterOfOneDeliveryGetsTheSameFlag() {
        // The seed gave the second updater the default flag: each closure cleared the pending flag.
        let second = Deliveries()
        let third = Deliveries()
        context.onUpdate { second.record($0) }
        context.onUpdate { third.record($0) }
        context.setNeedsUpdate(animated: true)
        scheduler.turn()
        context.update(animated: true)
        context.setNeedsUpdate(animated: false)
        context.setNeedsUpdate(animated: true)
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "aana")
        XCTAssertEqual(second.letters, "aana")
        XCTAssertEqual(third.letters, "aana")
    }

    func testDefaultFlagIsReadAtDelivery() {
        context.setNeedsUpdate()
        context.animatesByDefault = true
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "a")
    }

    func testRemovingAnUpdater() {
        let other = Deliveries()
        let token = context.onUpdate { other.record($0) }
        XCTAssertEqual(context.updaterCount, 2)
        token.remove()
        token.remove()
        XCTAssertEqual(context.updaterCount, 1)
        context.update()
        XCTAssertEqual(other.count, 0)
        XCTAssertEqual(deliveries.count, 1)
        context.removeUpdaters()
        context.update()
        XCTAssertEqual(deliveries.count, 1)
        XCTAssertEqual(context.updaterCount, 0)
    }

    func testUpdatersRunInRegistrationOrderWhateverIsRemoved() {
        context.removeUpdaters()
        var order: [String] = []
        let a = context.onUpdate { _ in order.append("a") }
        context.onUpdate { _ in order.append("b") }
        let c = context.onUpdate { _ in order.append("c") }
        context.onUpdate { _ in order.append("d") }
        context.update()
        XCTAssertEqual(order, ["a", "b", "c", "d"])
        a.remove()
        c.remove()
        order = []
        context.update()
        XCTAssertEqual(order, ["b", "d"])
        context.onUpdate { _ in order.append("e") }
        order = []
        context.update()
        XCTAssertEqual(order, ["b", "d", "e"])
        XCTAssertEqual(context.updaterCount, 3)
    }

    func testUpdatersAddedBetweenDeliveriesJoinTheNextOne() {
        context.update()
        let late = Deliveries()
        let token = context.onUpdate { late.record($0) }
        context.update(animated: true)
        XCTAssertEqual(deliveries.letters, "na")
        XCTAssertEqual(late.letters, "a")
        token.remove()
        context.update()
        XCTAssertEqual(late.count, 1)
    }

    func testATokenThatOutlivesItsContextIsHarmless() {
        var token: ViewUpdatingContext.ViewUpdater?
        weak var weakContext: ViewUpdatingContext?
        do {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            token = context.onUpdate { _ in XCTFail("released context delivered") }
            context.setNeedsUpdate()
            weakContext = context
        }
        XCTAssertNil(weakContext)
        scheduler.turn()
        XCTAssertFalse(token!.isActive, "its context is gone: nothing it stands for is registered")
        token!.remove()
        token!.remove()
        XCTAssertFalse(token!.isActive)
    }

    func testRequestInsideAnUpdaterIsDeliveredOnceInALaterCycle() {
        var depth = 0
        var maxDepth = 0
        var calls = 0
        context.onUpdate { [context] _ in
            depth += 1
            defer { depth -= 1 }
            maxDepth = max(maxDepth, depth)
            calls += 1
            if calls == 1 {
                context!.setNeedsUpdate()
                context!.setNeedsUpdate(animated: true)
                context!.setNeedsUpdate(animated: true)
                context!.update()  // re-entrant: deferred, never recursive
            }
        }
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(maxDepth, 1)
        scheduler.turn()
        // update() at the next cycle's start delivers everything asked, animated; nothing remains after it.
        XCTAssertEqual(calls, 2)
        XCTAssertEqual(deliveries.letters, "na")
        scheduler.turn()
        XCTAssertEqual(calls, 2)
    }

    func testReentrantFalseThenTrueKeepsTheEarlyFlushForTheNextCycle() {
        var calls = 0
        context.onUpdate { [context] _ in
            calls += 1
            if calls == 1 {
                context!.setNeedsUpdate(animated: false)
                context!.setNeedsUpdate(animated: true)
            }
        }
        context.update()
        XCTAssertEqual(deliveries.letters, "n")
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "nna", "F T from inside an updater: n then a, one cycle later")
    }

    func testRequestsFromFourThreadsBeforeACycleGiveOneDeliveryOnTheMainThread() {
        let context = context!
        let finished = DispatchGroup()
        for _ in 0..<4 {
            finished.enter()
            Thread.detachNewThread {
                for _ in 0..<1_000 { context.setNeedsUpdate() }
                finished.leave()
            }
        }
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(deliveries.count, 0)
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
        XCTAssertEqual(deliveries.offMainCount, 0)
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
    }

    func testCrossThreadRequestsApplyInArrivalOrder() {
        // F from a background thread, then (after it) T on the main thread: F T → n at T, then a.
        let context = context!
        onAnotherThread {
            context.setNeedsUpdate(animated: false)
        }
        context.setNeedsUpdate(animated: true)
        XCTAssertEqual(deliveries.letters, "n")
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "na")
    }

    func testCrossThreadSequenceAppliesInOrderAtTheNextCycle() {
        let context = context!
        onAnotherThread {
            context.setNeedsUpdate(animated: false)
            context.setNeedsUpdate(animated: true)
            context.setNeedsUpdate()
            context.setNeedsUpdate(animated: false)
        }
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "nn", "F T N F: n when T is applied, then n at the end")
    }

    func testAContextListedTwiceInOneTurnStillDeliversOncePerCycle() {
        let context = context!
        // Listed once through the inbox (a background request), once from the main thread.
        onAnotherThread { context.setNeedsUpdate() }
        context.setNeedsUpdate(animated: true)
        var calls = 0
        context.onUpdate { _ in
            calls += 1
            // A background request that arrives while this cycle delivers belongs to the next cycle.
            if calls == 1 { onAnotherThread { context.setNeedsUpdate() } }
        }
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "a", "one delivery in the turn")
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "an", "the late request in the next one")
    }

    func testIsUpdatePendingFromAnotherThread() {
        let context = context!
        func pendingElsewhere() -> Bool {
            let answer = Locked(0)
            onAnotherThread {
                answer.set(context.isUpdatePending ? 1 : 0)
            }
            return answer.get() == 1
        }
        XCTAssertFalse(pendingElsewhere())
        context.setNeedsUpdate()
        XCTAssertTrue(pendingElsewhere())
        scheduler.turn()
        XCTAssertFalse(pendingElsewhere())
        context.suspend()
        context.update()
        XCTAssertTrue(pendingElsewhere(), "an update kept while suspended is pending")
        context.resume()
        XCTAssertFalse(pendingElsewhere())
    }

    func testUpdateIfNeeded() {
        context.updateIfNeeded()
        XCTAssertEqual(deliveries.count, 0)
        context.setNeedsUpdate(animated: true)
        context.updateIfNeeded()
        XCTAssertEqual(deliveries.letters, "a")
        XCTAssertFalse(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
    }

    func testUpdateIfNeededAppliesRequestsFromOtherThreadsFirst() {
        let context = context!
        onAnotherThread {
            context.setNeedsUpdate(animated: true)
        }
        XCTAssertTrue(context.isUpdatePending)
        context.updateIfNeeded()
        XCTAssertEqual(deliveries.letters, "a")
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "a")
    }

    func testSuspendKeepsRequestsAndResumeDeliversOnce() {
        context.suspend()
        XCTAssertTrue(context.isSuspended)
        context.setNeedsUpdate()
        context.setNeedsUpdate(animated: true)
        scheduler.turn()
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 0)
        XCTAssertTrue(context.isUpdatePending)
        context.resume()
        XCTAssertFalse(context.isSuspended)
        XCTAssertEqual(deliveries.letters, "a")
        scheduler.turn()
        XCTAssertEqual(deliveries.count, 1)
    }

    func testReleasedContextWithAnUpdatePendingDeliversNothingAndIsFreed() {
        weak var weakContext: ViewUpdatingContext?
        weak var weakOwner: Owner?
        let calls = Deliveries()
        do {
            let owner = Owner()
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            context.onUpdate { [weak owner] animated in
                owner?.render()
                calls.record(animated)
            }
            owner.context = context
            context.setNeedsUpdate()
            weakContext = context
            weakOwner = owner
        }
        XCTAssertNil(weakOwner)
        XCTAssertNil(weakContext)
        scheduler.turn()
        XCTAssertEqual(calls.count, 0)
        XCTAssertFalse(scheduler.hasPendingWork)
    }

    func testReleasedFromAnotherThreadWhilePending() {
        weak var weakContext: ViewUpdatingContext?
        let calls = Deliveries()
        var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        context!.onUpdate { calls.record($0) }
        context!.setNeedsUpdate()
        weakContext = context
        let released = DispatchSemaphore(value: 0)
        let box = Box(context!)
        context = nil
        Thread.detachNewThread {
            box.value = nil
            released.signal()
        }
        released.wait()
        XCTAssertNil(weakContext)
        scheduler.turn()
        XCTAssertEqual(calls.count, 0)
    }

    func testTenThousandDirtyContextsEachGetOneDelivery() {
        let count = 10_000
        var delivered = [Int](repeating: 0, count: count)
        let contexts = (0..<count).map { index in
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            context.onUpdate { _ in delivered[index] += 1 }
            return context
        }
        for context in contexts {
            context.setNeedsUpdate()
            context.setNeedsUpdate(animated: true)
            context.setNeedsUpdate()
        }
        scheduler.turn()
        XCTAssertEqual(delivered.filter { $0 != 1 }.count, 0)
        scheduler.turn()
        XCTAssertEqual(delivered.reduce(0, +), count)
        XCTAssertTrue(contexts.allSatisfy { !$0.isUpdatePending })
    }

    func testRefreshEventForcesAnUpdate() {
        let center = NotificationCenter()
        let context = ViewUpdatingContext(scheduler: scheduler, center: center)
        let calls = Deliveries()
        context.onUpdate { calls.record($0) }
        context.setNeedsUpdate(animated: true)
        center.post(name: .applicationWillEnterForeground, object: nil)
        XCTAssertEqual(calls.letters, "a", "update() at once, with the pending flag")
        scheduler.turn()
        XCTAssertEqual(calls.count, 1, "the scheduled update was cancelled")
        center.post(name: .applicationWillEnterForeground, object: nil)
        XCTAssertEqual(calls.letters, "an", "a refresh delivers even when nothing is pending")
    }

    func testRefreshEventPostedOffTheMainThreadIsDeliveredInTheNextCycle() {
        let center = NotificationCenter()
        let context = ViewUpdatingContext(scheduler: scheduler, center: center)
        let calls = Deliveries()
        context.onUpdate { calls.record($0) }
        onAnotherThread {
            center.post(name: .applicationWillEnterForeground, object: nil)
        }
        XCTAssertEqual(calls.count, 0)
        scheduler.turn()
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(calls.offMainCount, 0)
    }

    func testCustomRefreshEvents() {
        let center = NotificationCenter()
        let didBecomeActive = Notification.Name("test.didBecomeActive")
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [didBecomeActive], center: center)
        let calls = Deliveries()
        context.onUpdate { calls.record($0) }
        center.post(name: .applicationWillEnterForeground, object: nil)
        XCTAssertEqual(calls.count, 0)
        center.post(name: didBecomeActive, object: nil)
        XCTAssertEqual(calls.count, 1)
    }

    func testForegroundNameIsDefined() {
        #if canImport(UIKit) && !os(watchOS)
        XCTAssertEqual(
            Notification.Name.applicationWillEnterForeground.rawValue, "UIApplicationWillEnterForegroundNotification")
        #else
        XCTAssertFalse(Notification.Name.applicationWillEnterForeground.rawValue.isEmpty)
        #endif
        XCTAssertEqual(ViewUpdatingContext.defaultRefreshEvents, [.applicationWillEnterForeground])
    }
}

/// The same on the real main run loop.
final class ViewUpdatingContextRunLoopTests: XCTestCase {
    func testOneDeliveryAtTheEndOfTheMainCycle() {
        let context = ViewUpdatingContext()
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        context.setNeedsUpdate()
        context.setNeedsUpdate(animated: true)
        context.setNeedsUpdate()
        XCTAssertEqual(deliveries.count, 0)
        spinMainLoop { deliveries.count > 0 }
        turnMainLoop()
        XCTAssertEqual(deliveries.letters, "a")
        XCTAssertFalse(context.isUpdatePending)
    }

    func testDefaultContextRefreshesOnTheDefaultCentersForegroundPost() {
        let context = ViewUpdatingContext(animated: true)
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        NotificationCenter.default.post(name: .applicationWillEnterForeground, object: nil)
        XCTAssertEqual(deliveries.letters, "a")
    }

    func testRequestsFromFourThreadsWhileTheLoopIsIdleGiveOneDelivery() {
        let context = ViewUpdatingContext()
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<1_000 { context.setNeedsUpdate() }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        spinMainLoop { deliveries.count > 0 }
        turnMainLoop()
        XCTAssertEqual(deliveries.count, 1)
        XCTAssertEqual(deliveries.offMainCount, 0)
    }

    func testRequestsFromOtherThreadsWhileTheLoopTurnsAreNeverLost() {
        let context = ViewUpdatingContext()
        let lastSeen = Locked(0)
        let model = Locked(0)
        context.onUpdate { _ in lastSeen.set(model.get()) }
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<500 {
                    model.increment()
                    context.setNeedsUpdate()
                }
                group.leave()
            }
        }
        spinMainLoop(timeout: 20) { group.wait(timeout: .now()) == .success && lastSeen.get() == 2_000 }
        XCTAssertEqual(lastSeen.get(), 2_000, "the last request was followed by a delivery that saw it")
    }

    func testDispatchMainSchedulerDelivers() {
        let context = ViewUpdatingContext(scheduler: .dispatchMain, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        DispatchQueue.global().async { context.setNeedsUpdate(animated: true) }
        spinMainLoop { deliveries.count > 0 }
        turnMainLoop()
        XCTAssertEqual(deliveries.letters, "a")
    }
}

final class Owner {
    var context: ViewUpdatingContext?
    func render() {}
}

final class Box<T>: @unchecked Sendable {
    // @unchecked Sendable: handed to one other thread, which is the only one to touch it afterwards.
    var value: T?
    init(_ value: T) { self.value = value }
}

/// A tiny locked integer for tests.
final class Locked: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var value: Int
    init(_ value: Int) { self.value = value }
    func get() -> Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
    func set(_ new: Int) {
        lock.lock()
        defer { lock.unlock() }
        value = new
    }
    func increment() {
        lock.lock()
        defer { lock.unlock() }
        value += 1
    }
}
