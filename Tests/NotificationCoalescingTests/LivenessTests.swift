import CMallocStats
import CoalescingTestSupport
import CoreFoundation
import Foundation
import NotificationCoalescing
import XCTest

/// Nothing requested is lost or left waiting for an outside event; no lock is held around user code;
/// nothing keeps anything alive; a registration costs the same at its last call as at its first.
///
/// A run-loop test runs the real main loop with `runUntilStopped`: the handler that receives the work
/// stops the loop. If the loop went to sleep with the work pending, nothing would wake it and the run
/// would end by its deadline instead — the failure these tests look for (an event, not a duration).
final class LivenessTests: XCTestCase {
    // MARK: 1. Handlers cost the same at every post

    func testAnObserversStackDepthIsTheSameAtTheFirstAndTheTenThousandthPost() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        var depths: [UInt] = []
        var posts = 0
        context.observe(.a) { _, _ in
            posts += 1
            if posts == 1 || posts == 10_000 { depths.append(stackAddress()) }
        }
        for _ in 0..<10_000 { center.post(name: .a, object: nil) }
        XCTAssertEqual(posts, 10_000)
        XCTAssertEqual(depths.count, 2)
        XCTAssertEqual(
            depths.first, depths.last, "the stack inside the handler grew between the 1st and the 10 000th post")
    }

    func testACoalescingContextsHandlerStackDepthIsFlatToo() {
        let scheduler = ManualScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var depths: [UInt] = []
        var posts = 0
        context.observe(.a) { _, _ in
            posts += 1
            if posts == 1 || posts == 10_000 { depths.append(stackAddress()) }
        }
        for _ in 0..<10_000 {
            context.enqueue(Notification(name: .a))
            scheduler.turn()
        }
        XCTAssertEqual(posts, 10_000)
        XCTAssertEqual(depths.first, depths.last, "the stack inside the handler grew between posts")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// Under `swift test --sanitize=thread` (CI runs it): the hand-off of a handler registered on one
    /// thread and called on another is one ThreadSanitizer can follow.
    func testObservingOnABackgroundThreadAndPostingOnTheMainThreadIsRaceFree() {
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        let calls = AtomicCounter()
        for _ in 0..<20 {
            onAnotherThread { context.observe(.b) { _, _ in calls.add() } }
            center.post(name: .b, object: nil)
        }
        XCTAssertEqual(calls.value, (1...20).reduce(0, +))
    }

    // MARK: 2. A request late in the pass

    func testAnEnqueueFromALaterObserverInThePassIsPostedWithoutAnOutsideEvent() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        var posted = 0
        context.observe(.a) { _, _ in
            posted += 1
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        // Like Core Animation's commit (order 2 000 000): after the scheduler's observer in the same pass.
        let late = MainLoopObserver(order: 2_000_000, once: true) { context.enqueue(Notification(name: .a)) }
        defer { late.invalidate() }
        XCTAssertTrue(runUntilStopped(), "the loop slept with the notification pending")
        XCTAssertEqual(posted, 1)
    }

    // MARK: 3. A nested run loop inside a handler

    func testARequestMadeBeforeANestedLoopInsideAHandlerIsPostedAfterIt() {
        let outer = NotificationCoalescingContext(scheduler: .mainRunLoop)
        let other = NotificationCoalescingContext(scheduler: .mainRunLoop)
        var order: [String] = []
        outer.observe(.a) { _, _ in
            order.append("a")
            other.enqueue(Notification(name: .b))  // asks for a wake-up…
            // …that a nested loop (a modal wait) uses up without turning: the observer is running.
            _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02))
            outer.enqueue(Notification(name: .c))  // deduplicated against the used-up request
        }
        other.observe(.b) { _, _ in order.append("b") }
        outer.observe(.c) { _, _ in
            order.append("c")
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        outer.enqueue(Notification(name: .a))
        XCTAssertTrue(runUntilStopped(), "the loop slept with work pending after the handler returned")
        XCTAssertEqual(order, ["a", "b", "c"])
    }

    /// A handler that enqueues into its own context and then runs a nested loop: the loop's passes do not post
    /// that context inside the handler (never re-entrantly), the rest of the batch posts first (FIFO), and what
    /// the handler enqueued posts in a later pass, without an outside event.
    func testANestedLoopInsideAHandlerDoesNotPostItsOwnContextInsideIt() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        var order: [String] = []
        context.observe(.a) { _, _ in
            order.append("a")
            context.enqueue(Notification(name: .c))  // from inside a handler: a later turn
            _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02))  // a modal wait
            order.append("/a")
        }
        context.observe(.b) { _, _ in order.append("b") }
        context.observe(.c) { _, _ in
            order.append("c")
            CFRunLoopStop(CFRunLoopGetCurrent())
        }
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .b))
        XCTAssertTrue(runUntilStopped(), "the loop slept with work pending after the handler returned")
        XCTAssertEqual(order, ["a", "/a", "b", "c"])
    }

    /// The same on a manual scheduler, turn by turn: the batch's end asks for the turn that posts it.
    func testANestedTurnInsideAHandlerLeavesItsOwnContextForTheNextTurn() throws {
        let scheduler = ManualScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var order: [String] = []
        context.observe(.a) { _, _ in
            order.append("a")
            context.enqueue(Notification(name: .c))
            XCTAssertEqual(scheduler.turn(), 1, "the nested turn calls the context, which posts nothing")
            order.append("/a")
        }
        context.observe(.b) { _, _ in order.append("b") }
        context.observe(.c) { _, _ in order.append("c") }
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .b))
        scheduler.turn()
        XCTAssertEqual(order, ["a", "/a", "b"])
        XCTAssertFalse(scheduler.isIdle, "c waits for a turn")
        scheduler.turn()
        XCTAssertEqual(order, ["a", "/a", "b", "c"])
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// A scheduler that turns only when asked (a user's scheduler without a guard before sleeping): a handler
    /// of a context parked for another mode enqueues, then a nested turn uses up the turn that enqueue asked
    /// for without calling the context (it is posting). The batch's end asks again.
    func testAHandlersEnqueueIsAskedForAgainWhenANestedTurnUsedUpItsTurn() {
        final class AskedScheduler: CoalescingScheduler, @unchecked Sendable {
            // @unchecked Sendable: `asks` is read and written on the test's thread only.
            var asks = 0
            override func requestTurn(insideTurn: Bool) { asks += 1 }
        }
        let scheduler = AskedScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var order: [String] = []
        var asksAfterTheNestedTurn = 0
        context.observe(.a) { _, _ in
            order.append("a")
            context.enqueue(Notification(name: .c))  // asks for a turn…
            scheduler.runTurn(mode: .default)  // …which a nested turn uses up
            asksAfterTheNestedTurn = scheduler.asks
        }
        context.observe(.c) { _, _ in order.append("c") }
        context.enqueue(Notification(name: .b), forModes: [RunLoop.Mode("test.liveness.elsewhere")])  // parks it
        context.enqueue(Notification(name: .a))
        scheduler.runTurn(mode: .default)
        XCTAssertEqual(order, ["a"])
        XCTAssertGreaterThan(scheduler.asks, asksAfterTheNestedTurn, "nothing asked for the turn that posts c")
        scheduler.runTurn(mode: .default)
        XCTAssertEqual(order, ["a", "c"])
    }

    // MARK: 5, 6. The frame-paced clock

    func testTheFramePacedClockKeepsTickingWhileWorkWaitsForAnotherMode() {
        let mode = RunLoop.Mode("test.liveness.framePaced.\(UUID().uuidString)")
        let scheduler = FramePacedScheduler(framesPerSecond: 500)
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var posted = 0
        context.observe(.a) { _, _ in posted += 1 }
        context.enqueue(Notification(name: .a), forModes: [mode])
        spinRunLoop(mode: .default, until: { scheduler.tickCount >= 3 || scheduler.isPaused })
        XCTAssertFalse(scheduler.isPaused, "paused with work waiting for another mode")
        XCTAssertEqual(posted, 0, "the default mode does not admit it")
        spinRunLoop(mode: mode, until: { posted > 0 })
        XCTAssertEqual(posted, 1, "posted when its mode runs")
        spinRunLoop(mode: .default, until: { scheduler.isPaused })
        XCTAssertTrue(scheduler.isPaused, "paused once nothing waits")
    }

    func testAFramePacedRequestFromAnotherThreadIsDeliveredWhileTheMainLoopRunsItsCustomMode() {
        let mode = RunLoop.Mode("test.liveness.framePacedResume.\(UUID().uuidString)")
        let scheduler = FramePacedScheduler(framesPerSecond: 500)
        let context = NotificationCoalescingContext(scheduler: scheduler)
        let recorder = Recorder()
        recorder.observe(context)
        context.enqueue(Notification(name: .a), forModes: [mode])  // the clock now ticks in `mode` too
        spinRunLoop(mode: mode, until: { recorder.count == 1 && scheduler.isPaused })
        XCTAssertEqual(recorder.names, ["test.a"])
        XCTAssertTrue(scheduler.isPaused)
        onAnotherThread { context.enqueue(Notification(name: .b), forModes: [mode]) }
        spinRunLoop(mode: mode, until: { recorder.count == 2 })
        XCTAssertEqual(recorder.names, ["test.a", "test.b"], "the background request never resumed the clock")
    }

    func testAFramePacedSchedulerReleasedOnAnotherThreadStopsItsClockOnTheMainThread() {
        final class Box: @unchecked Sendable {
            // @unchecked Sendable: handed to one background thread, which drops the last reference.
            var scheduler: FramePacedScheduler?
        }
        let box = Box()
        weak var weakScheduler: FramePacedScheduler?
        do {
            let scheduler = FramePacedScheduler(framesPerSecond: 1_000)
            weakScheduler = scheduler
            let context = NotificationCoalescingContext(scheduler: scheduler)
            var posted = 0
            context.observe(.a) { _, _ in posted += 1 }
            context.enqueue(Notification(name: .a))
            spinRunLoop(until: { posted == 1 })  // the clock exists and has ticked
            XCTAssertEqual(posted, 1)
            context.enqueue(Notification(name: .a))  // ticking again, with work pending, when it goes
            box.scheduler = scheduler
        }
        onAnotherThread { box.scheduler = nil }  // the last reference goes off the main thread
        XCTAssertNil(weakScheduler)
        turnRunLoop(20)  // frames that were due fire into nothing: no crash, no tick of a freed scheduler
    }

    // MARK: 7. No user code under the queue's lock

    func testTheDeinitOfAReplacedNotificationsValuesMayUseTheContext() {
        let scheduler = ManualScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        let recorder = Recorder()
        recorder.observe(context)
        let finished = DispatchSemaphore(value: 0)
        // On another thread, so that a deadlock fails the test instead of hanging it.
        Thread.detachNewThread {
            context.enqueue(
                Notification(
                    name: .a, object: nil, userInfo: ["v": CallsBack { context.enqueue(Notification(name: .b)) }]))
            // Coalesces: the first is replaced and released; its value's deinit enqueues.
            context.enqueue(Notification(name: .a))
            finished.signal()
        }
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "deadlocked: a deinit ran under the queue's lock")
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(recorder.names, ["test.a", "test.b"])
    }

    func testTheDeinitOfAValueRemovedByANowPostMayUseTheContext() {
        let scheduler = ManualScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        let recorder = Recorder()
        recorder.observe(context)
        var calledBack = false
        context.enqueue(
            Notification(name: .a, object: nil, userInfo: ["v": CallsBack { calledBack = context.pendingCount == 0 }]))
        context.enqueue(Notification(name: .a), postingStyle: .now)  // removes the pending one first
        XCTAssertTrue(calledBack, "the removed notification's value was released, outside the lock")
        XCTAssertEqual(recorder.names, ["test.a"])
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(recorder.names, ["test.a"], "the removed one never posts")
    }

    func testASendersDeinitDuringCoalescingMayUseTheContext() {
        let scheduler = ManualScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var sender: CallsBack? = CallsBack { context.enqueue(Notification(name: .b)) }
        context.enqueue(Notification(name: .a, object: sender))
        sender = nil  // the pending notification holds the last reference
        context.enqueue(Notification(name: .a), coalesceMask: .onName)  // replaces it: the sender goes
        XCTAssertEqual(context.pendingCount, 2, "the sender's deinit enqueued .b")
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        _ = sender
    }

    // MARK: 8. No cycle between a scheduler and pending work

    func testReleasingAContextWithWorkPendingFreesItsScheduler() {
        weak var weakScheduler: ManualScheduler?
        weak var weakCenter: NotificationCenter?
        do {
            let scheduler = ManualScheduler()
            let center = NotificationCenter()
            weakScheduler = scheduler
            weakCenter = center
            let context = NotificationCoalescingContext(center: center, scheduler: scheduler)
            context.enqueue(Notification(name: .a))
            context.enqueue(Notification(name: .b), forModes: [RunLoop.Mode("test.parked")])
            scheduler.turn()  // .b is parked now
            context.enqueue(Notification(name: .c))
        }
        XCTAssertNil(weakScheduler, "the scheduler and the pending work keep each other alive")
        XCTAssertNil(weakCenter)
    }

    func testABackgroundThreadsRunLoopSchedulerGoesWithTheContextThatHadWorkPending() {
        final class Box: @unchecked Sendable {
            // @unchecked Sendable: written on the background thread before `done` is signalled, read after.
            weak var scheduler: CoalescingScheduler?
            var strong: CoalescingScheduler?
        }
        let box = Box()
        onAnotherThread {
            // A scheduler of our own for this thread, not the thread dictionary's: nothing else holds it.
            let context = NotificationCoalescingContext(scheduler: .currentRunLoop)
            box.scheduler = context.scheduler
            context.enqueue(Notification(name: .a))
        }
        // The thread has exited; its dictionary went with it (Foundation may free it a little later).
        spinRunLoop(until: { box.scheduler == nil })
        XCTAssertNil(box.scheduler, "the thread's scheduler is kept alive by the released context's pending work")
    }

    // MARK: prepare(modes:) under concurrent enqueues for the same new mode

    func testConcurrentEnqueuesForANewModeArePostedWhileTheLoopRunsIt() {
        for round in 0..<20 {
            let mode = RunLoop.Mode("test.liveness.prepare.\(round).\(UUID().uuidString)")
            let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
            var posted = Set<Notification.Name>()
            for name in [Notification.Name.a, .b] {
                context.observe(name) { _, _ in
                    posted.insert(name)
                    if posted.count == 2 { CFRunLoopStop(CFRunLoopGetCurrent()) }
                }
            }
            let start = DispatchSemaphore(value: 0)
            for name in [Notification.Name.a, .b] {
                Thread.detachNewThread {
                    start.wait()
                    context.enqueue(Notification(name: name), forModes: [mode])
                }
            }
            // The loop runs the new mode (a timer keeps it from counting as empty) while both threads race.
            let keepAlive = CFRunLoopTimerCreateWithHandler(
                kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 60, 0, 0, 0
            ) { _ in }
            CFRunLoopAddTimer(CFRunLoopGetCurrent(), keepAlive, cfRunLoopMode(mode.rawValue))
            start.signal()
            start.signal()
            let result = CFRunLoopRunInMode(cfRunLoopMode(mode.rawValue), 10, false)
            let stopped = result == .stopped
            if !stopped { print("round \(round): run ended with \(result.rawValue)") }
            CFRunLoopTimerInvalidate(keepAlive)
            XCTAssertTrue(stopped, "round \(round): an enqueue for a mode being added was left waiting")
            XCTAssertEqual(posted, [.a, .b])
        }
    }

    // MARK: A recycled thread handle

    func testASchedulerOfAThreadThatExitedIsCurrentOnNoOtherThread() {
        final class Box: @unchecked Sendable {
            // @unchecked Sendable: written before the thread's semaphore is signalled, read after.
            var scheduler: ManualScheduler?
        }
        let box = Box()
        onAnotherThread { box.scheduler = ManualScheduler() }
        let scheduler = try! XCTUnwrap(box.scheduler)
        let claimed = AtomicCounter()
        // The C library recycles the handles of exited threads: new threads often get the old one.
        for _ in 0..<50 {
            onAnotherThread { if scheduler.isCurrent { claimed.add() } }
        }
        XCTAssertEqual(claimed.value, 0, "a new thread took the exited owner's place")
        XCTAssertFalse(scheduler.isCurrent)
    }
}

/// Where the stack is now: equal at two calls from the same place when the stack is equally deep.
@inline(never)
func stackAddress() -> UInt {
    UInt(bitPattern: malloc_stats_stack_frame())
}
