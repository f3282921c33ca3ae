import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import UpdateContext

/// A nested run loop inside an updater or a handler (a modal wait) turns the scheduler while an outer turn is
/// under way. Its passes serve what was listed since the outer turn began; what the outer turn has not reached
/// yet waits for it, as on the main run loop (whose observer CFRunLoop never runs inside itself). Each listing is
/// served once, by one turn, never recursively; and what a delivery or handler asks for during a pass waits for
/// a later one.
final class NestedPassTests: XCTestCase {
    static let privateMode = RunLoop.Mode("nested.private")

    /// B was listed and then delivered at once (`updateIfNeeded()`); the outer turn has taken it but not reached
    /// it when A's updater runs a nested loop, where a timer (the main thread) requests B again: the outer turn
    /// delivers it once A's updater returns, not the nested loop.
    func testAMainThreadRequestForWhatTheOuterTurnHasNotReachedWaitsForIt() {
        assertARequestForWhatTheOuterTurnHasNotReachedWaitsForIt { b in b.setNeedsUpdate() }
    }

    /// The same with the request from another thread: its listing is a new one, which the nested loop's pass
    /// serves — once, and the outer turn then finds nothing left for B.
    func testAnotherThreadsRequestDuringANestedLoopIsDeliveredOnce() {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var deliveriesOfB = 0
        b.onUpdate { _ in deliveriesOfB += 1 }
        a.onUpdate { _ in
            onAnotherThread { b.setNeedsUpdate() }
            for _ in 0..<3 { scheduler.turn() }  // the nested loop's passes
        }
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        b.updateIfNeeded()  // delivered at once: nothing pending, still listed
        scheduler.turn()
        XCTAssertEqual(deliveriesOfB, 2, "the request made in the nested loop, delivered once")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    private func assertARequestForWhatTheOuterTurnHasNotReachedWaitsForIt(
        _ request: @escaping (ViewUpdatingContext) -> Void, line: UInt = #line
    ) {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var deliveriesOfB = 0
        var deliveredInTheNestedLoop = false
        var insideA = false
        b.onUpdate { _ in
            deliveriesOfB += 1
            if insideA { deliveredInTheNestedLoop = true }
        }
        a.onUpdate { _ in
            insideA = true
            defer { insideA = false }
            request(b)  // made in the nested loop
            for _ in 0..<3 { scheduler.turn() }  // the nested loop's passes
        }
        a.setNeedsUpdate()  // A first in the turn's list
        b.setNeedsUpdate()
        b.updateIfNeeded()  // delivered at once: nothing pending, still listed
        XCTAssertEqual(deliveriesOfB, 1, line: line)
        scheduler.turn()
        XCTAssertFalse(deliveredInTheNestedLoop, "a nested pass served what the outer turn had not reached", line: line)
        XCTAssertEqual(deliveriesOfB, 2, "the outer turn delivered it once A returned", line: line)
        XCTAssertNoThrow(try scheduler.expectIdle(), line: line)
    }

    /// What the outer turn had not reached is delivered once, by the outer turn after A's updater returns; what
    /// A's updater requests for a context not reached yet is delivered by that same turn, and what B's updater
    /// requests waits for the next turn.
    func testTheOuterTurnServesWhatItHadNotReachedOnceAfterANestedPass() {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        let c = ViewUpdatingContext(label: "C", scheduler: scheduler, refreshEvents: [])
        var deliveries: [String] = []
        var deliveriesOfB = 0
        b.onUpdate { _ in
            deliveries.append("B")
            deliveriesOfB += 1
            if deliveriesOfB == 1 { b.setNeedsUpdate() }  // re-entrant: a later turn
        }
        c.onUpdate { _ in deliveries.append("C") }
        a.onUpdate { _ in
            deliveries.append("A")
            XCTAssertEqual(scheduler.turn(), 0, "one nested pass (a modal wait): nothing listed since the turn began")
            c.setNeedsUpdate()  // C is pending already, and not reached yet: this turn shows it
        }
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        c.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(deliveries, ["A", "B", "C"], "served once each, in listing order")
        deliveries.removeAll()
        scheduler.turn()
        XCTAssertEqual(deliveries, ["B"])
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// A pass in a private mode delivers no view update: what the outer turn had not reached stays the outer
    /// turn's, delivered once when the updater returns, and nothing stays parked.
    func testAPrivateModeNestedPassLeavesTheOuterTurnsClientsToIt() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var deliveriesOfB = 0
        var deliveredInsideA = false
        var insideA = false
        b.onUpdate { _ in
            deliveriesOfB += 1
            if insideA { deliveredInsideA = true }
        }
        a.onUpdate { _ in
            insideA = true
            defer { insideA = false }
            for _ in 0..<3 { scheduler.turn(mode: Self.privateMode) }
        }
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(deliveriesOfB, 1)
        XCTAssertFalse(deliveredInsideA)
        _ = try scheduler.runUntilIdle()
        XCTAssertEqual(deliveriesOfB, 1)
        XCTAssertFalse(scheduler.hasPendingWork)
    }

    /// Three updaters that each run a nested pass: the passes of A and B find nothing listed since the turn
    /// began; C requests A and B again, and C's pass delivers them (their own nested passes find nothing): each
    /// once, none recursively, and then idle.
    func testThreeNestedLevelsDeliverEachOnceAndNeverRecursively() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        let c = ViewUpdatingContext(label: "C", scheduler: scheduler, refreshEvents: [])
        var order: [String] = []
        var active: Set<String> = []
        var recursive = false
        func enter(_ name: String) {
            if !active.insert(name).inserted { recursive = true }
            order.append(name)
        }
        a.onUpdate { _ in
            enter("A")
            scheduler.turn()
            active.remove("A")
        }
        b.onUpdate { _ in
            enter("B")
            scheduler.turn()
            active.remove("B")
        }
        c.onUpdate { _ in
            enter("C")
            if order.count == 3 {
                a.setNeedsUpdate()
                b.setNeedsUpdate()
            }
            scheduler.turn()
            active.remove("C")
        }
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        c.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(order, ["A", "B", "C", "A", "B"], "A and B again by C's nested pass")
        XCTAssertEqual(try scheduler.runUntilIdle(), 0)
        XCTAssertFalse(recursive)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// A context listed by the main thread and by another thread whose updater runs a nested pass: its
    /// second listing is served without calling the updater recursively, and it delivers once.
    func testAContextListedTwiceIsNotDeliveredRecursivelyByANestedPass() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        var depth = 0
        var deepest = 0
        var calls = 0
        a.onUpdate { _ in
            depth += 1
            deepest = max(deepest, depth)
            calls += 1
            if calls == 1 { scheduler.turn() }
            depth -= 1
        }
        a.setNeedsUpdate()
        onAnotherThread { a.setNeedsUpdate() }
        scheduler.turn()
        _ = try scheduler.runUntilIdle()
        XCTAssertEqual(deepest, 1)
        XCTAssertEqual(calls, 1)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// A context released by an earlier updater before the nested pass reaches it delivers nothing.
    /// A nested pass run while a turn applies a context's inbox (a transaction value's `deinit`, released when a
    /// request from another thread replaced it) reaches that context's second listing: it skips it — the turn
    /// under way delivers it once, at its end — instead of stopping the program.
    func testANestedPassDuringAContextsInboxSkipsItAndTheTurnDeliversOnce() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(label: "draining", scheduler: scheduler, refreshEvents: [])
        var shown: [String] = []
        context.onUpdateWithTransaction { transaction in shown.append(transaction[TurnerKey.self].name) }
        var first = UpdateTransaction()
        first[TurnerKey.self] = Turner(name: "first", turning: scheduler)
        context.setNeedsUpdate(transaction: first)  // listed on the main thread
        first = UpdateTransaction()  // the context holds the only reference now
        onAnotherThread {  // listed from another thread: replaces the value when the turn applies it
            var second = UpdateTransaction()
            second[TurnerKey.self] = Turner(name: "second", turning: nil)
            context.setNeedsUpdate(transaction: second)
        }
        scheduler.turn()
        XCTAssertEqual(shown, ["second"], "one delivery, showing the request applied last")
        XCTAssertTrue(scheduler.isIdle)
    }

    /// The same nested pass, when another thread requests the context first (from inside the replaced value's
    /// `deinit`): that request came after the turn took the inbox, so the turn under way cannot deliver it, and
    /// the pass took the listing it made. The next turn delivers it.
    func testARequestListedDuringANestedPassInsideTheInboxIsDeliveredByTheNextTurn() throws {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(label: "draining", scheduler: scheduler, refreshEvents: [])
        var shown: [String] = []
        context.onUpdateWithTransaction { transaction in shown.append(transaction[TurnerKey.self].name) }
        onAnotherThread {
            var first = UpdateTransaction()
            first[TurnerKey.self] = Turner(name: "first", turning: scheduler, requestingFirst: context)
            context.setNeedsUpdate(transaction: first)
            var second = UpdateTransaction()
            second[TurnerKey.self] = Turner(name: "second", turning: nil)
            context.setNeedsUpdate(transaction: second)  // replaces the first when the turn applies the inbox
        }
        scheduler.turn()
        XCTAssertEqual(shown, ["second"], "the turn delivered what it applied")
        XCTAssertFalse(scheduler.isIdle, "the request made during the nested pass waits for a turn")
        XCTAssertEqual(try scheduler.runUntilIdle(), 1)
        XCTAssertEqual(shown, ["second", "none"], "and the next turn delivered it")
        XCTAssertFalse(context.isUpdatePending)
    }

    func testAContextReleasedBeforeTheNestedPassDeliversNothing() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        var b: ViewUpdatingContext? = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var deliveriesOfB = 0
        b?.onUpdate { _ in deliveriesOfB += 1 }
        a.onUpdate { _ in
            b = nil
            scheduler.turn()
        }
        a.setNeedsUpdate()
        b?.setNeedsUpdate()
        scheduler.turn()
        _ = try scheduler.runUntilIdle()
        XCTAssertEqual(deliveriesOfB, 0)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// Each turn counts the listings it served: a nested pass finds none of the outer turn's, which serves both.
    func testANestedPassServesNoneOfTheOuterTurnsListings() {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var counts: [Int] = []
        b.onUpdate { _ in }
        a.onUpdate { _ in
            counts.append(scheduler.turn())  // B waits for the outer turn
            counts.append(scheduler.turn())
            counts.append(scheduler.turn())
        }
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        let outer = scheduler.turn()
        XCTAssertEqual(counts, [0, 0, 0])
        XCTAssertEqual(outer, 2, "the outer turn served A and B")
    }

    /// A context listed by the main thread and by another thread whose updater runs a nested pass: the pass
    /// finds it delivering (its second listing) and leaves it; with nothing left to deliver after its updater,
    /// no turn is asked for.
    func testAContextPassedByWhileDeliveringAsksForNoTurnWhenNothingIsLeft() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        var deliveries = 0
        a.onUpdate { _ in
            deliveries += 1
            scheduler.turn()
        }
        a.setNeedsUpdate()
        onAnotherThread { a.setNeedsUpdate(animated: false) }
        scheduler.turn()
        XCTAssertEqual(deliveries, 1)
        XCTAssertTrue(scheduler.isIdle)
        XCTAssertFalse(scheduler.hasPendingWork, "a turn was asked for nothing")
        XCTAssertEqual(try scheduler.runUntilIdle(), 0)
    }

    /// Inside an updater, what the turn under way has not reached is waiting (`isIdle` says so), but it is no work
    /// for a nested `runUntilIdle()` (a modal wait in a test), which returns at once: the outer turn serves it.
    func testTheOuterTurnsUnreachedWorkWaitsForItThroughANestedRunUntilIdle() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var deliveredB = false
        var idleInsideA: Bool?
        var turnsInsideA: Int?
        var deliveredBInsideA = false
        b.onUpdate { _ in deliveredB = true }
        a.onUpdate { _ in
            idleInsideA = scheduler.isIdle
            turnsInsideA = try? scheduler.runUntilIdle()
            deliveredBInsideA = deliveredB
        }
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(idleInsideA, false)
        XCTAssertEqual(turnsInsideA, 0)
        XCTAssertFalse(deliveredBInsideA)
        XCTAssertTrue(deliveredB)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// An animating scope entered in A's updater flushes B, which the turn under way has not reached: B's
    /// earlier non-animated change is shown without animation before the scope's change animates.
    func testAScopeInAnUpdaterFlushesWhatTheTurnUnderWayHasNotReached() throws {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "B", scheduler: scheduler, refreshEvents: [])
        var flagsOfB: [Bool] = []
        b.onUpdate { flagsOfB.append($0) }
        a.onUpdate { _ in withUpdateAnimation { b.setNeedsUpdate() } }
        a.setNeedsUpdate()
        b.setNeedsUpdate()  // not animated, pending before the scope
        scheduler.turn()
        _ = try scheduler.runUntilIdle()
        XCTAssertEqual(flagsOfB, [false, true])
    }

    // MARK: Notification queues

    /// A queue parked for a private mode, passed by a nested pass in every update of A: it stays listed once,
    /// so a turn's cost does not grow with the number of modal waits.
    func testAParkedQueueStaysListedOnceThroughNestedPasses() {
        let scheduler = ManualScheduler()
        let a = ViewUpdatingContext(label: "A", scheduler: scheduler, refreshEvents: [])
        let q = NotificationCoalescingContext(label: "Q", center: NotificationCenter(), scheduler: scheduler)
        a.onUpdate { _ in scheduler.turn() }  // a modal wait in every update of A
        q.enqueue(Notification(name: Notification.Name("y")), forModes: [Self.privateMode])  // parked for good
        var served: [Int] = []
        for _ in 0..<12 {
            a.setNeedsUpdate()
            served.append(scheduler.turn())
        }
        XCTAssertLessThanOrEqual(served.max() ?? 0, 2, "listings served per turn: \(served)")
        XCTAssertEqual(served.last, 2, "the outer turn serves A and the parked Q: \(served)")
    }

    /// What a handler enqueues while its queue posts waits for a later turn, after a nested pass in another
    /// queue's handler served the queue (parked for a private mode besides).
    func testAnEnqueueFromAHandlerWaitsForALaterTurnAfterANestedPass() {
        let scheduler = ManualScheduler()
        let center = NotificationCenter()
        let a = NotificationCoalescingContext(label: "A", center: center, scheduler: scheduler)
        let q = NotificationCoalescingContext(label: "Q", center: center, scheduler: scheduler)
        var posted: [String] = []
        a.observe(Notification.Name("a")) { _, _ in
            posted.append("a")
            scheduler.turn()  // a nested pass (a modal wait)
        }
        q.observe(Notification.Name("x")) { _, _ in posted.append("x") }
        q.observe(Notification.Name("z")) { _, _ in
            posted.append("z")
            q.enqueue(Notification(name: Notification.Name("w")))  // from inside a handler: a later turn
        }
        q.observe(Notification.Name("w")) { _, _ in posted.append("w") }
        a.enqueue(Notification(name: Notification.Name("a")))
        q.enqueue(Notification(name: Notification.Name("x")))
        q.enqueue(Notification(name: Notification.Name("y")), forModes: [Self.privateMode])  // keeps Q parked
        scheduler.turn()
        XCTAssertEqual(posted, ["a", "x"])
        posted.removeAll()
        q.enqueue(Notification(name: Notification.Name("z")))
        XCTAssertEqual(scheduler.turn(), 1, "Q listed once")
        XCTAssertEqual(posted, ["z"])
        posted.removeAll()
        scheduler.turn()
        XCTAssertEqual(posted, ["w"])
    }

    /// A queue whose handler runs a nested pass inside its own posting is not called again inside it: the
    /// batch posts in order (FIFO), and what the handler enqueued comes after it, in a later turn.
    func testAQueueIsNotCalledInsideItsOwnPostingByANestedPass() {
        let scheduler = ManualScheduler()
        let center = NotificationCenter()
        let a = NotificationCoalescingContext(label: "A", center: center, scheduler: scheduler)
        let q = NotificationCoalescingContext(label: "Q", center: center, scheduler: scheduler)
        var posted: [String] = []
        var depth = 0
        var reentered = false
        a.observe(Notification.Name("a")) { _, _ in scheduler.turn() }
        q.observe(Notification.Name("n1")) { _, _ in
            posted.append("n1")
            depth += 1
            defer { depth -= 1 }
            q.enqueue(Notification(name: Notification.Name("m")))  // from inside a handler: a later turn
            scheduler.turn()  // a nested pass inside Q's handler
        }
        q.observe(Notification.Name("n2")) { _, _ in posted.append("n2") }
        q.observe(Notification.Name("m")) { _, _ in
            posted.append("m")
            if depth > 0 { reentered = true }
        }
        a.enqueue(Notification(name: Notification.Name("a")))
        q.enqueue(Notification(name: Notification.Name("y")), forModes: [Self.privateMode])
        scheduler.turn()
        q.enqueue(Notification(name: Notification.Name("n1")))
        q.enqueue(Notification(name: Notification.Name("n2")))
        scheduler.turn()
        XCTAssertFalse(reentered, "Q posted m inside n1's handler: \(posted)")
        XCTAssertEqual(Array(posted.prefix(2)), ["n1", "n2"])
    }
}

/// A transaction value that turns a scheduler when it is released (user code in a `deinit`).
private final class Turner: Sendable {
    let name: String
    let scheduler: ManualScheduler?
    /// Requested from another thread before the nested pass.
    let requested: ViewUpdatingContext?
    init(name: String, turning scheduler: ManualScheduler?, requestingFirst requested: ViewUpdatingContext? = nil) {
        (self.name, self.scheduler, self.requested) = (name, scheduler, requested)
    }
    deinit {
        if let requested { onAnotherThread { requested.setNeedsUpdate() } }
        scheduler?.turn()
    }
}

private enum TurnerKey: UpdateTransactionKey {
    static let defaultValue = Turner(name: "none", turning: nil)
}
