import CoalescingTestSupport
import CoreFoundation
import Foundation
import NotificationCoalescing
import XCTest

/// Read as timelines: enqueues, `turn`, then what was posted. Run-loop behaviour is tested on the real
/// main run loop (XCTest runs tests on the main thread and lets us turn it); the rest with a
/// `ManualScheduler` turned by hand.
final class NotificationCoalescingContextTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: NotificationCoalescingContext!
    private var recorder: Recorder!

    override func setUp() {
        scheduler = ManualScheduler()
        context = NotificationCoalescingContext(scheduler: scheduler)
        recorder = Recorder()
        recorder.observe(context)
    }

    override func tearDown() {
        // Every test ends with nothing left pending.
        if let context { XCTAssertEqual(context.pendingCount, 0, "left pending") }
        context = nil
        scheduler = nil
    }

    // MARK: .now

    func testNowPostsSynchronouslyAndIsNeverCoalesced() {
        context.enqueue(Notification(name: .a), postingStyle: .now)
        XCTAssertEqual(recorder.names, ["test.a"])
        context.enqueue(Notification(name: .a), postingStyle: .now)
        context.enqueue(Notification(name: .a), postingStyle: .now)
        XCTAssertEqual(recorder.count, 3)
        scheduler.turn()
        XCTAssertEqual(recorder.count, 3)
    }

    /// A `.now` post that removed everything pending leaves the scheduler idle: the next turn posts nothing.
    func testExpectIdlePassesOnceANowPostRemovedWhatWasPending() {
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .a), postingStyle: .now)
        XCTAssertEqual(recorder.names, ["test.a"])
        XCTAssertNoThrow(try scheduler.expectIdle(), "everything enqueued was posted")
        context.enqueue(Notification(name: .b))
        XCTAssertThrowsError(try scheduler.expectIdle(), "a notification waits for its turn")
        scheduler.turn()
        XCTAssertEqual(recorder.names, ["test.a", "test.b"])
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// A handler that enqueues on its own context and then runs a nested loop loses nothing: what it enqueued
    /// is posted on a later turn, though the context still waited for another mode when the turn began.
    func testAnEnqueueFromAHandlerThatRunsANestedLoopIsPostedLater() throws {
        let scheduler = scheduler!
        let context = context!
        context.observe(.a) { _, _ in
            context.enqueue(Notification(name: .b))
            scheduler.turn()  // a nested loop in the handler
        }
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .c), forModes: [RunLoop.Mode("private")])
        scheduler.turn()
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(recorder.names, ["test.a", "test.b"])
        scheduler.turn(mode: RunLoop.Mode("private"))
        XCTAssertEqual(recorder.names, ["test.a", "test.b", "test.c"])
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testNowRemovesPendingMatchesUnderItsMask() {
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .b))
        context.enqueue(Notification(name: .a), postingStyle: .now)
        XCTAssertEqual(recorder.names, ["test.a"])
        XCTAssertEqual(context.pendingCount, 1)
        scheduler.turn()
        XCTAssertEqual(recorder.names, ["test.a", "test.b"])
    }

    func testNowWithEmptyMaskLeavesPendingAlone() {
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .a), postingStyle: .now, coalesceMask: [])
        XCTAssertEqual(context.pendingCount, 1)
        scheduler.turn()
        XCTAssertEqual(recorder.names, ["test.a", "test.a"])
    }

    // MARK: forModes

    func testNowOutsideARunningLoopPostsWhateverItsModes() {
        context.enqueue(Notification(name: .a), postingStyle: .now, forModes: [RunLoop.Mode("elsewhere")])
        XCTAssertEqual(recorder.count, 1)
    }

    func testNowIsDroppedWhenTheLoopRunsInAModeNotListed() {
        let tracking = RunLoop.Mode("tracking")
        context.observe(.b) { [context] _, _ in
            // Runs inside a turn in `tracking`.
            context!.enqueue(Notification(name: .c), postingStyle: .now)  // default mode only: dropped
            context!.enqueue(Notification(name: .d), postingStyle: .now, forModes: [tracking])  // posts
        }
        context.enqueue(Notification(name: .b), forModes: [tracking])
        scheduler.turn(mode: tracking)
        XCTAssertEqual(recorder.names.sorted(), ["test.b", "test.d"], "c was dropped")
    }

    func testHeldNotificationsWaitForOneOfTheirModes() {
        let tracking = RunLoop.Mode("tracking")
        context.enqueue(Notification(name: .a), forModes: [tracking])
        context.enqueue(Notification(name: .b))
        context.enqueue(Notification(name: .c), forModes: [.common])
        scheduler.turn(mode: .default)
        XCTAssertEqual(recorder.names, ["test.b", "test.c"])
        scheduler.turn(mode: .default)
        XCTAssertEqual(recorder.count, 2)
        scheduler.turn(mode: tracking)
        XCTAssertEqual(recorder.names, ["test.b", "test.c", "test.a"])
    }

    func testCommonStandsForTheCommonModes() {
        let tracking = RunLoop.Mode("tracking")
        let scheduler = ManualScheduler(commonModes: [tracking])
        let context = NotificationCoalescingContext(scheduler: scheduler)
        recorder.observe(context)
        context.enqueue(Notification(name: .a), forModes: [.common])
        context.enqueue(Notification(name: .b), forModes: [.common])
        scheduler.turn(mode: RunLoop.Mode("modal"))
        XCTAssertEqual(recorder.count, 0)
        scheduler.turn(mode: tracking)
        XCTAssertEqual(recorder.names, ["test.a", "test.b"])
    }

    // MARK: coalescing

    func testAsapCoalescesOnNameAndSenderByDefault() {
        let s1 = SwiftSender()
        let s2 = SwiftSender()
        for _ in 0..<5 {
            context.enqueue(Notification(name: .a, object: s1))
            context.enqueue(Notification(name: .a, object: s2))
            context.enqueue(Notification(name: .a))
        }
        XCTAssertEqual(context.pendingCount, 3)
        XCTAssertEqual(recorder.count, 0, "nothing posts before the turn")
        scheduler.turn()
        XCTAssertEqual(recorder.count, 3)
        XCTAssertTrue(recorder.posts[0].object as AnyObject? === s1)
        XCTAssertTrue(recorder.posts[1].object as AnyObject? === s2)
        XCTAssertNil(recorder.posts[2].object)
    }

    func testEachMaskWithBothPostingStyles() {
        let s1 = SwiftSender()
        let s2 = SwiftSender()
        let cases: [(NotificationQueue.NotificationCoalescing, Int)] = [
            ([.onName, .onSender], 3),  // a/s1 replaced; a/s2, b/s1 stay; + newcomer
            ([.onName], 2),  // every a replaced; b/s1 stays
            ([.onSender], 2),  // a/s1 and b/s1 replaced; a/s2 stays
            ([], 4),  // nothing replaced
        ]
        for style in [NotificationQueue.PostingStyle.asap, .whenIdle] {
            for (mask, expected) in cases {
                let before = recorder.count
                context.enqueue(Notification(name: .a, object: s1), postingStyle: style, coalesceMask: [])
                context.enqueue(Notification(name: .a, object: s2), postingStyle: style, coalesceMask: [])
                context.enqueue(Notification(name: .b, object: s1), postingStyle: style, coalesceMask: [])
                context.enqueue(Notification(name: .a, object: s1), postingStyle: style, coalesceMask: mask)
                scheduler.turn()
                XCTAssertEqual(recorder.count - before, expected, "style \(style) mask \(mask.rawValue)")
            }
        }
    }

    func testNewestWins() {
        for tag in 1...5 {
            context.enqueue(Notification(name: .a, object: nil, userInfo: ["tag": tag]))
        }
        scheduler.turn()
        XCTAssertEqual(recorder.count, 1)
        XCTAssertEqual(recorder.posts.first?.userInfo?["tag"] as? Int, 5)
    }

    func testPureSwiftSendersCoalesceByIdentity() {
        let sender = SwiftSender()
        for _ in 0..<5 { context.enqueue(Notification(name: .a, object: sender)) }
        scheduler.turn()
        XCTAssertEqual(recorder.count, 1, "Foundation's queue posts 5 here on Linux")
        XCTAssertTrue(recorder.posts[0].object as AnyObject? === sender)
    }

    func testNSObjectSendersCoalesceByIdentityNotEquality() {
        let one = NSString(string: "same")
        let other = NSMutableString(string: "same")
        context.enqueue(Notification(name: .a, object: one))
        context.enqueue(Notification(name: .a, object: other))
        context.enqueue(Notification(name: .a, object: one))
        scheduler.turn()
        XCTAssertEqual(recorder.count, 2)
    }

    // MARK: order

    func testPendingNotificationsPostInEnqueueOrder() {
        for name in [Notification.Name.a, .b, .c, .d] { context.enqueue(Notification(name: name)) }
        scheduler.turn()
        XCTAssertEqual(recorder.names, ["test.a", "test.b", "test.c", "test.d"], "Foundation's queue posts d, c, b, a")
    }

    func testWhenIdlePostsAfterAsapInTheSameTurn() {
        context.enqueue(Notification(name: .a), postingStyle: .whenIdle)
        context.enqueue(Notification(name: .b), postingStyle: .asap)
        context.enqueue(Notification(name: .c), postingStyle: .whenIdle)
        context.enqueue(Notification(name: .d), postingStyle: .asap)
        scheduler.turn()
        XCTAssertEqual(recorder.names, ["test.b", "test.d", "test.a", "test.c"])
    }

    func testOnePostPerTurn() {
        context.enqueue(Notification(name: .a))
        scheduler.turn()
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .a))
        scheduler.turn()
        XCTAssertEqual(scheduler.turn(), 0, "an empty turn has nothing to do")
        XCTAssertEqual(recorder.count, 2)
    }

    // MARK: re-entrancy

    func testEnqueueFromAHandlerPostsOnALaterTurnNeverReentrantly() {
        var depth = 0
        var maxDepth = 0
        var rounds = 0
        context.observe(.a) { [context] _, _ in
            depth += 1
            defer { depth -= 1 }
            maxDepth = max(maxDepth, depth)
            rounds += 1
            if rounds < 3 {
                context!.enqueue(Notification(name: .a))
                context!.enqueue(Notification(name: .a))
            }
        }
        context.enqueue(Notification(name: .a))
        scheduler.turn()
        XCTAssertEqual(rounds, 1)
        scheduler.turn()
        XCTAssertEqual(rounds, 2)
        XCTAssertEqual(try scheduler.runUntilIdle(), 1)
        XCTAssertEqual(rounds, 3)
        XCTAssertEqual(maxDepth, 1)
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testNowFromAHandlerOfAHeldNotificationDoesNotTouchTheBatchUnderWay() {
        var postedBeforeTheNow = -1
        context.observe(.a) { [context, recorder] _, _ in
            postedBeforeTheNow = recorder!.names.filter { $0 == "test.b" }.count
            context!.enqueue(Notification(name: .b), postingStyle: .now)
        }
        context.enqueue(Notification(name: .a))
        context.enqueue(Notification(name: .b))
        scheduler.turn()
        // The handler's `.now` b posts at once; the held b was already taken for this turn and posts too
        // (observers of one post run in no fixed order, so only counts are compared).
        XCTAssertEqual(postedBeforeTheNow, 0)
        XCTAssertEqual(recorder.names.sorted(), ["test.a", "test.b", "test.b"])
    }

    func testRunUntilIdleReportsASelfFeedingHandlerInsteadOfReturningQuietly() {
        context.observe(.a) { [context] _, _ in context!.enqueue(Notification(name: .a)) }
        context.enqueue(Notification(name: .a))
        XCTAssertThrowsError(try scheduler.runUntilIdle(maxTurns: 5)) { error in
            XCTAssertEqual((error as? ManualScheduler.NotIdle)?.turns, 5)
        }
        XCTAssertEqual(recorder.count, 5)
        XCTAssertThrowsError(try scheduler.expectIdle(), "the sixth post is still waiting")
        context.removeObservers()
        scheduler.turn()
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    // MARK: threads

    func testEnqueueFromManyThreadsLosesNothing() {
        let threads = 4
        let perThread = 1_000
        let context = context!
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for i in 0..<perThread {
                context.enqueue(Notification(name: Notification.Name("t\(thread)-\(i)")), coalesceMask: [])
            }
        }
        let received = Recorder()
        for thread in 0..<threads {
            for i in 0..<perThread {
                context.observe(Notification.Name("t\(thread)-\(i)")) { _, note in received.record(note) }
            }
        }
        XCTAssertEqual(context.pendingCount, threads * perThread)
        scheduler.turn()
        XCTAssertEqual(received.count, threads * perThread)
        // Each thread's notifications keep their order.
        for thread in 0..<threads {
            let mine = received.names.filter { $0.hasPrefix("t\(thread)-") }
            XCTAssertEqual(mine, (0..<perThread).map { "t\(thread)-\($0)" })
        }
    }

    // MARK: lifetime

    func testReleasedContextPostsNothingAndFreesWhatItHeld() {
        weak var weakContext: NotificationCoalescingContext?
        weak var weakSender: SwiftSender?
        let center = NotificationCenter()
        let observed = Recorder()
        let token = center.addObserver(forName: .a, object: nil, queue: nil) { observed.record($0) }
        defer { center.removeObserver(token) }
        do {
            let context = NotificationCoalescingContext(center: center, scheduler: scheduler)
            let sender = SwiftSender()
            context.enqueue(Notification(name: .a, object: sender))
            weakContext = context
            weakSender = sender
            XCTAssertEqual(context.pendingCount, 1)
        }
        XCTAssertNil(weakContext)
        XCTAssertNil(weakSender, "the held notification (and its sender) is freed with the context")
        scheduler.turn()
        XCTAssertEqual(observed.count, 0)
        XCTAssertFalse(scheduler.hasPendingWork)
    }

    func testObserversRemovedWhenContextGoes() {
        let center = NotificationCenter()
        var calls = 0
        var token: NotificationObserver?
        do {
            let context = NotificationCoalescingContext(center: center, scheduler: scheduler)
            token = context.observe(.a) { _, _ in calls += 1 }
            center.post(name: .a, object: nil)
            XCTAssertEqual(calls, 1)
        }
        center.post(name: .a, object: nil)
        XCTAssertEqual(calls, 1)
        XCTAssertFalse(token!.isActive)
        token!.remove()  // harmless after the context is gone
    }

    func testRemovingATokenTwiceIsHarmless() {
        let token = context.observe(.b) { _, _ in XCTFail("removed") }
        token.remove()
        token.remove()
        context.enqueue(Notification(name: .b), postingStyle: .now)
        XCTAssertEqual(recorder.count, 1)
    }

    func testAHandlerCanRemoveItsOwnToken() {
        var calls = 0
        context.observe(.b) { token, _ in
            calls += 1
            token.remove()
        }
        context.enqueue(Notification(name: .b), postingStyle: .now)
        context.enqueue(Notification(name: .b), postingStyle: .now)
        XCTAssertEqual(calls, 1)
    }

    // MARK: typed

    struct Score: ObservableNotification, Equatable {
        var value: Int
        var label: String
    }

    func testTypedPayloadRoundTrip() {
        var received: [Score] = []
        context.observe { (_, score: Score) in received.append(score) }
        context.enqueue(Score(value: 1, label: "one"))
        context.enqueue(Score(value: 2, label: "two"))
        scheduler.turn()
        XCTAssertEqual(received, [Score(value: 2, label: "two")], "same name, same sender: coalesced, newest wins")
        context.enqueue(Score(value: 3, label: "three"), postingStyle: .now)
        XCTAssertEqual(received.last, Score(value: 3, label: "three"))
    }

    func testTypedObserverIgnoresAnUntypedPostOfTheSameName() {
        var received = 0
        context.observe { (_, _: Score) in received += 1 }
        context.center.post(name: Score.name, object: nil)
        XCTAssertEqual(received, 0)
    }

    func testTypedObserverFiltersOnSender() {
        let mine = SwiftSender()
        var received: [Int] = []
        context.observe(Score.self, object: mine) { _, score in received.append(score.value) }
        context.enqueue(Score(value: 1, label: ""), object: SwiftSender())
        context.enqueue(Score(value: 2, label: ""), object: mine)
        scheduler.turn()
        XCTAssertEqual(received, [2])
    }
}

/// The same rules on the real main run loop, which XCTest lets us turn.
final class NotificationCoalescingRunLoopTests: XCTestCase {
    func testAsapPostsOnceWhenTheMainRunLoopTurns() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        let recorder = Recorder()
        recorder.observe(context)
        for _ in 0..<100 { context.enqueue(Notification(name: .a)) }
        context.enqueue(Notification(name: .b), postingStyle: .whenIdle)
        XCTAssertEqual(recorder.count, 0)
        spinRunLoop { recorder.count >= 2 }
        turnRunLoop()
        XCTAssertEqual(recorder.names, ["test.a", "test.b"])
        XCTAssertEqual(context.pendingCount, 0)
    }

    func testDefaultSchedulerIsTheCreatingThreadsRunLoop() {
        let context = NotificationCoalescingContext()
        XCTAssertTrue(context.scheduler === RunLoopScheduler.mainRunLoop)
        XCTAssertTrue(context.scheduler.isCurrent)
    }

    func testEnqueueFromOtherThreadsIsDeliveredOnTheOwnersThread() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        let recorder = Recorder()
        let names = (0..<400).map { Notification.Name("x\($0)") }
        recorder.observe(context, names)
        let done = DispatchGroup()
        for thread in 0..<4 {
            DispatchQueue.global().async(group: done) {
                for i in 0..<100 { context.enqueue(Notification(name: names[thread * 100 + i])) }
            }
        }
        // The main thread just runs its loop; the enqueuers wake it.
        spinRunLoop(timeout: 10) { recorder.count == 400 && done.wait(timeout: .now()) == .success }
        XCTAssertEqual(recorder.count, 400)
        XCTAssertEqual(recorder.offMainCount, 0, "posted only on the owner's (main) thread")
        XCTAssertEqual(Set(recorder.names).count, 400)
    }

    func testEnqueueFromABackgroundThreadWakesASleepingLoop() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        let recorder = Recorder()
        recorder.observe(context)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
            context.enqueue(Notification(name: .a))
        }
        // One long run: it returns only at its deadline, so the post proves the loop woke for it (1.5 s: the block
        // is due after 0.05 s, and a loaded machine or a sanitizer may start it late).
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 1.5))
        XCTAssertEqual(recorder.count, 1)
    }

    func testEnqueueInsideAHandlerIsPostedOnALaterTurnOfTheRealLoop() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        var order: [String] = []
        var inHandler = false
        context.observe(.a) { _, _ in
            XCTAssertFalse(inHandler, "re-entrant post")
            inHandler = true
            defer { inHandler = false }
            order.append("a")
            if order.count == 1 {
                context.enqueue(Notification(name: .a))
                order.append("enqueued")
            }
        }
        context.enqueue(Notification(name: .a))
        spinRunLoop { order.count >= 3 }
        XCTAssertEqual(order, ["a", "enqueued", "a"])
    }

    func testCustomModeTurnsWhenTheLoopRunsInIt() {
        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        let recorder = Recorder()
        recorder.observe(context)
        let modal = RunLoop.Mode("test.modal")
        context.enqueue(Notification(name: .a), forModes: [modal])
        turnRunLoop(3, mode: .default)
        XCTAssertEqual(recorder.count, 0, "not in the default mode")
        // A mode with only observers counts as empty; give it a timer so it runs.
        let timer = Timer(timeInterval: 0.001, repeats: true) { _ in }
        RunLoop.current.add(timer, forMode: modal)
        defer { timer.invalidate() }
        spinRunLoop(mode: modal) { recorder.count == 1 }
        XCTAssertEqual(recorder.count, 1)
    }

    /// UIKit runs the main loop in `UITrackingRunLoopMode` while the user scrolls, a mode it adds to the
    /// common modes. Linux's run loop can do the same with a custom mode: every rule must treat it as
    /// common, as in the default mode.
    func testAModeAddedToTheCommonModesCountsAsCommon() {
        let tracking = RunLoop.Mode("test.tracking")
        CFRunLoopAddCommonMode(CFRunLoopGetMain(), cfRunLoopMode(tracking.rawValue))
        XCTAssertTrue(RunLoopScheduler.mainRunLoop.isCommon(tracking))
        XCTAssertFalse(RunLoopScheduler.mainRunLoop.isCommon(RunLoop.Mode("test.not-common")))

        let context = NotificationCoalescingContext(scheduler: .mainRunLoop)
        let recorder = Recorder()
        recorder.observe(context)
        final class Seen: @unchecked Sendable {
            // @unchecked Sendable: written by a block the main run loop performs, read on the main thread.
            var mode: RunLoop.Mode?
        }
        let seen = Seen()
        RunLoop.main.perform(inModes: [tracking]) {
            seen.mode = RunLoop.current.currentMode
            // .now for the common modes posts while scrolling; .now for the default mode alone does not.
            context.enqueue(Notification(name: .a), postingStyle: .now, forModes: [.common])
            context.enqueue(Notification(name: .b), postingStyle: .now)
            // Held for the common modes: posted at this turn of the tracking mode.
            context.enqueue(Notification(name: .c), forModes: [.common])
        }
        let timer = Timer(timeInterval: 0.001, repeats: true) { _ in }
        RunLoop.main.add(timer, forMode: tracking)
        defer { timer.invalidate() }
        spinRunLoop(mode: tracking) { recorder.count >= 2 }
        XCTAssertEqual(seen.mode, tracking)
        XCTAssertEqual(recorder.names, ["test.a", "test.c"])
        XCTAssertEqual(context.pendingCount, 0)
    }

    func testABackgroundThreadsRunLoopDeliversOnThatThreadAndIsFreedWithIt() {
        final class Outcome: @unchecked Sendable {
            // @unchecked Sendable: written by the background thread, read after `done` is signalled.
            var posts = 0
            var onOwnerThread = true
            weak var scheduler: RunLoopScheduler?
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                let owner = Thread.current
                let context = NotificationCoalescingContext()  // this thread's run loop
                outcome.scheduler = context.scheduler as? RunLoopScheduler
                context.observe(.a) { _, _ in
                    outcome.posts += 1
                    outcome.onOwnerThread = outcome.onOwnerThread && Thread.current == owner
                }
                // A run loop with only observers counts as empty: keep a timer in it.
                let timer = Timer(timeInterval: 0.005, repeats: true) { _ in }
                RunLoop.current.add(timer, forMode: .default)
                context.enqueue(Notification(name: .a))
                context.enqueue(Notification(name: .a))
                DispatchQueue.global().async { context.enqueue(Notification(name: .b)) }
                let deadline = Date(timeIntervalSinceNow: 5)
                while outcome.posts < 1 && Date() < deadline {
                    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
                }
                timer.invalidate()
            }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(outcome.posts, 1)
        XCTAssertTrue(outcome.onOwnerThread)
        // The thread has ended and no context uses its scheduler: it is gone (Foundation's queues are not).
        spinRunLoop(timeout: 5) { outcome.scheduler == nil }
        XCTAssertNil(outcome.scheduler)
    }

    func testDispatchMainSchedulerDeliversThroughTheMainQueue() {
        let context = NotificationCoalescingContext(scheduler: .dispatchMain)
        let recorder = Recorder()
        recorder.observe(context)
        // The other thread's enqueues are certainly made before the main queue can turn (this thread waits
        // for them), so the count below does not depend on timing: one post per name.
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for _ in 0..<50 { context.enqueue(Notification(name: .a)) }
            done.signal()
        }
        for _ in 0..<50 { context.enqueue(Notification(name: .b)) }
        done.wait()
        spinRunLoop { recorder.count >= 2 && context.pendingCount == 0 }
        turnRunLoop()
        XCTAssertEqual(recorder.names.sorted(), ["test.a", "test.b"], "one block, one post per name")
        XCTAssertEqual(recorder.offMainCount, 0)
    }

    func testReleasedContextPostsNothingOnTheRealLoop() {
        let center = NotificationCenter()
        let observed = Recorder()
        let token = center.addObserver(forName: .a, object: nil, queue: nil) { observed.record($0) }
        defer { center.removeObserver(token) }
        weak var weakContext: NotificationCoalescingContext?
        do {
            let context = NotificationCoalescingContext(center: center, scheduler: .mainRunLoop)
            context.enqueue(Notification(name: .a))
            weakContext = context
        }
        XCTAssertNil(weakContext)
        turnRunLoop(5)
        XCTAssertEqual(observed.count, 0)
    }
}
