import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Transactions where features cross: a subscription's element arriving during the delivery of the one
/// before, animated `modify` after non-animated requests (here and on another thread), explicit transactions
/// inside scopes, `animateWithFlushedUpdates`' completions and replay, running subscriptions, and recording
/// while a context is released. Run on the main thread (XCTest), on manual schedulers turned here.
final class TransactionEdgeTests: XCTestCase {
    private func waitUntil(_ condition: () -> Bool, timeout: TimeInterval = 5) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    }

    // MARK: A sequence's completion, once per delivery of its elements

    /// `requestUpdates(from:transaction:)`: "each called once per delivery that shows the requests of one or
    /// more elements". An element that arrives while the delivery of the one before it runs (its request
    /// waits for the next cycle) is shown by a delivery of its own, which calls the completion again: on
    /// 0.2.0 it joined the instance of the delivery under way, which then ran once, after both (CI's flaky
    /// TSan step: 3 calls for 4 deliveries).
    func testAnElementArrivingDuringTheDeliveryOfTheOneBeforeHasACompletionCallOfItsOwn() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        // Each call records how many deliveries had been made when it ran.
        let calls = SharedLog()
        let deliveries = AtomicCounter()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { completion in
            calls.append("\(completion.wasShown ? "shown" : "dropped") after \(deliveries.value)")
        }
        let subscription = context.requestUpdates(from: stream, transaction: transaction)
        context.onUpdate { _ in
            deliveries.add()
            guard deliveries.value == 1 else { return }
            // The second element arrives now: its request lands in the inbox, for the next cycle.
            continuation.yield(2)
            self.waitUntil { context.isUpdatePending }
        }
        continuation.yield(1)
        waitUntil { context.isUpdatePending }
        scheduler.turn()
        XCTAssertEqual(deliveries.value, 1)
        XCTAssertEqual(calls.entries, ["shown after 1"], "the first delivery showed the first element")
        scheduler.turn()
        XCTAssertEqual(deliveries.value, 2, "the second element's own delivery")
        XCTAssertEqual(calls.entries, ["shown after 1", "shown after 2"], "once per delivery")
        continuation.finish()
        withExtendedLifetime(subscription) {}
    }

    // MARK: StateUpdatingContext: the flush shows the state before the animated change

    /// AnimatedFlagRules: the early flush "must show the state *before* the animated change". A plain
    /// non-animated request (not a `modify`) is pending when `modify(animated: true)` changes the state: the
    /// flush renders the state before it, and the animated delivery animates the change. On 0.2.0 the flush
    /// drew the new state without animation, and the animated delivery had nothing left to show.
    func testAnAnimatedModifyAfterAPlainNonAnimatedRequestAnimatesItsChange() {
        let scheduler = ManualScheduler()
        let state = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var shown: [String] = []
        state.onRender { value, _, animated in shown.append("\(value)\(animated ? "a" : "n")") }
        scheduler.turn()
        state.modify { $0 = 1 }
        state.context.setNeedsUpdate(animated: false)
        state.modify(animated: true) { $0 = 2 }
        XCTAssertEqual(shown, ["0n", "1n"], "the flush, before the change, shows the state before it")
        scheduler.turn()
        XCTAssertEqual(shown, ["0n", "1n", "2a"], "the animated change animates")
        XCTAssertFalse(scheduler.hasWork(admittedBy: .default))
    }

    /// The same after a change made in a non-animated scope (which requests with a non-animated transaction).
    func testAnAnimatedModifyAfterAChangeInANonAnimatedScopeAnimatesItsChange() {
        let scheduler = ManualScheduler()
        let state = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var shown: [String] = []
        state.onRender { value, _, animated in shown.append("\(value)\(animated ? "a" : "n")") }
        scheduler.turn()
        state.modify { $0 = 1 }
        withUpdateAnimation(nil) { state.context.setNeedsUpdate() }
        state.modify(animated: true) { $0 = 2 }
        scheduler.turn()
        XCTAssertEqual(shown, ["0n", "1n", "2a"])
    }

    /// From another thread the requests are applied in arrival order: a non-animated request, then an animated
    /// `modify` made on another thread, flush (showing the state before the change) and then animate.
    func testAnAnimatedModifyOnAnotherThreadAfterANonAnimatedRequestAnimatesItsChange() {
        let scheduler = ManualScheduler()
        let state = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var shown: [String] = []
        state.onRender { value, _, animated in shown.append("\(value)\(animated ? "a" : "n")") }
        scheduler.turn()
        state.modify { $0 = 1 }
        state.context.setNeedsUpdate(animated: false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            state.modify(animated: true) { $0 = 2 }
            done.signal()
        }
        done.wait()
        scheduler.turn()
        XCTAssertEqual(shown, ["0n", "1n", "2a"])
    }

    /// The outside review of these fixes: a renderer that changes the state during the early flush that an
    /// animated `modify` makes on the main thread is not "inside its own body" (it stopped the program, in
    /// every build); its change is delivered like any request made in a renderer.
    func testARendererChangingTheStateInsideTheFlushOfAnAnimatedModifyIsDelivered() throws {
        let scheduler = ManualScheduler()
        let state = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var shown: [String] = []
        state.onRender { value, _, animated in
            shown.append("\(value)\(animated ? "a" : "n")")
            if value == 1 { state.modify { $0 = 10 } }  // a renderer that normalises the state
        }
        scheduler.turn()
        state.modify(animated: false) { $0 = 1 }
        state.modify(animated: true) { $0 = 2 }
        try scheduler.runUntilIdle()
        XCTAssertEqual(shown.first, "0n")
        XCTAssertTrue(shown.contains("1n"), "the flush showed the state before the animated change: \(shown)")
        XCTAssertEqual(state.state, 2, "the body ran again on the renderer's state, and set it")
        XCTAssertEqual(shown.last, "2a")
    }

    /// The outside review: the flush of an animated `modify` on the main thread happens once, before the body,
    /// not inside its retry loop — a producer changing the state on another thread made every attempt flush
    /// (one `modify` rendered over a thousand times and held the main thread for seconds).
    func testAnAnimatedModifyOnTheMainThreadFlushesOnceWhateverAnotherThreadChanges() {
        let scheduler = ManualScheduler()
        let state = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        let renders = AtomicCounter()
        // The renderer lets the producer commit while it runs: each attempt of the body then loses the race.
        let producing = DispatchSemaphore(value: 0)
        let produced = DispatchSemaphore(value: 0)
        var armed = false
        state.onRender { _, _, _ in
            renders.add()
            if armed && renders.value < 50 {  // (bounded: on 0.2.0's fix every attempt rendered, forever)
                producing.signal()
                produced.wait()
            }
        }
        scheduler.turn()
        let stop = AtomicCounter()
        Thread.detachNewThread {
            while stop.value == 0 {
                guard producing.wait(timeout: .now() + 0.01) == .success else { continue }
                state.modify(animated: false) { $0 += 1 }
                produced.signal()
            }
        }
        state.modify(animated: false) { $0 = 5 }
        armed = true
        let before = renders.value
        var attempts = 0
        state.modify(animated: true) { value in
            attempts += 1
            value = -1
        }
        armed = false
        stop.store(1)
        // One flush before the body; and, when the other thread's non-animated request is pending again as
        // the change commits, the rules' flush of it (showing the state before this change).
        XCTAssertLessThanOrEqual(renders.value - before, 2, "one flush before the body, and the rules' own")
        XCTAssertLessThanOrEqual(attempts, 2)
        _ = try? scheduler.runUntilIdle()
    }

    /// The outside review: a delivery that showed a sequence's element tells the completion `.shown`, even when
    /// its updater releases the context while a later element's request waits (which is then told
    /// `.dropped(.contextReleased)`, once): the drop's outcome overrode the delivery's.
    func testADeliveryThatShowedAnElementIsToldShownWhenItsUpdaterReleasesTheContext() {
        let scheduler = ManualScheduler()
        var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let calls = SharedLog()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { calls.append("\($0)") }
        let subscription = context!.requestUpdates(from: stream, transaction: transaction)
        var deliveries = 0
        context!.onUpdate { _ in
            deliveries += 1
            continuation.yield(2)  // arrives while this delivery runs: waits in the inbox
            self.waitUntil { context?.isUpdatePending == true }
            context = nil  // released inside the updater, element 2 pending
        }
        continuation.yield(1)
        waitUntil { context?.isUpdatePending == true }
        scheduler.turn()
        spinMainLoop(timeout: 10) { calls.entries.count >= 2 }
        XCTAssertEqual(deliveries, 1)
        XCTAssertEqual(
            calls.entries,
            ["shown(finished: true)", "dropped(UpdateContextCore.UpdateCompletion.DropReason.contextReleased)"])
        continuation.finish()
        withExtendedLifetime(subscription) {}
    }

    // MARK: Explicit transactions inside a scope join it

    /// UsingTransactions: every request made inside `withUpdateTransaction` carries it "by any route": an
    /// explicit transaction's request made in the body joins the scope, so the scope's completion waits for
    /// the delivery that shows it (its own animation and values win, as in a nested scope). On 0.2.0 the
    /// scope's completion was told `.dropped(.noUpdaters)` as the body returned.
    func testAnExplicitTransactionRequestInsideAScopeJoinsTheScopesCompletion() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var shown: [String?] = []
        context.onUpdateWithTransaction { shown.append($0.animation.map { "\($0)" }) }
        let told = SharedLog()
        var scope = UpdateTransaction(animation: .default)
        scope.addCompletion { told.append("scope \($0)") }
        var own = UpdateTransaction(animation: .linear(duration: 0.2))
        own.addCompletion { told.append("own \($0)") }
        withUpdateTransaction(scope) {
            context.setNeedsUpdate(transaction: own)
        }
        XCTAssertEqual(told.entries, [], "the request is pending: nothing is told yet")
        scheduler.turn()
        XCTAssertEqual(shown, ["\(UpdateAnimation.linear(duration: 0.2))"], "its own animation wins")
        XCTAssertEqual(told.entries.sorted(), ["own shown(finished: true)", "scope shown(finished: true)"])
    }

    /// `update(transaction:)` inside a scope delivers at once, and the scope's completion is told "shown"
    /// once the body has returned.
    func testUpdateWithATransactionInsideAScopeTellsTheScopeShown() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        let told = SharedLog()
        var scope = UpdateTransaction(animation: .default)
        scope.addCompletion { told.append("\($0)") }
        withUpdateTransaction(scope) {
            context.update(transaction: UpdateTransaction(animation: nil))
            XCTAssertEqual(deliveries, 1)
        }
        XCTAssertEqual(told.entries, ["shown(finished: true)"])
    }

    /// `StateUpdatingContext.modify(transaction:)` inside a scope joins it too.
    func testModifyWithATransactionInsideAScopeJoinsTheScope() {
        let scheduler = ManualScheduler()
        let state = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        var shown: [Int] = []
        state.onRender { value, _, _ in shown.append(value) }
        scheduler.turn()
        let told = SharedLog()
        var scope = UpdateTransaction(animation: .default)
        scope.addCompletion { told.append("\($0)") }
        withUpdateTransaction(scope) {
            state.modify(transaction: UpdateTransaction(animation: .easeIn(duration: 0.1))) { $0 = 5 }
        }
        XCTAssertEqual(told.entries, [])
        scheduler.turn()
        XCTAssertEqual(shown, [0, 5])
        XCTAssertEqual(told.entries, ["shown(finished: true)"])
    }

    // MARK: animateWithFlushedUpdates: the animated request is told after the delivery that animates it

    /// `animateWithFlushedUpdates(transaction:)` when step 1's updaters asked again with a non-animated
    /// transaction: what `changes` requested with an animated transaction is shown by the animated delivery,
    /// and its completion is told after it — not after the non-animated flush of what step 1's updaters asked.
    func testAnimateWithFlushedUpdatesTellsTheChangesCompletionAfterTheirAnimatedDelivery() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = SharedLog()
        var asksAgain = true
        context.onUpdate { animated in
            deliveries.append(animated ? "a" : "n")
            if asksAgain {
                asksAgain = false
                var quiet = UpdateTransaction()
                quiet.addCompletion { _ in }
                context.setNeedsUpdate(transaction: quiet)  // deferred: updaters are running
            }
        }
        context.setNeedsUpdate()
        let told = SharedLog()
        var changesOwn = UpdateTransaction(animation: .easeOut(duration: 0.2))
        changesOwn.addCompletion {
            told.append("changes' \($0.wasShown ? "shown" : "dropped") after \(deliveries.entries.joined())")
        }
        var outer = UpdateTransaction(animation: .linear(duration: 0.3))
        outer.addCompletion {
            told.append("outer \($0.wasShown ? "shown" : "dropped") after \(deliveries.entries.joined())")
        }
        context.animateWithFlushedUpdates(transaction: outer) {
            context.setNeedsUpdate(transaction: changesOwn)
        }
        XCTAssertEqual(
            deliveries.entries, ["n", "n", "a"], "step 1, the flush of what its updater asked, the animated one")
        XCTAssertEqual(told.entries.sorted(), ["changes' shown after nna", "outer shown after nna"])
        XCTAssertFalse(context.isUpdatePending)
    }

    /// The outside review's suspicion, proved: when step 1's updaters ask again without animation,
    /// `animateWithFlushedUpdates` delivers that too before `changes` run, so "only what `changes` requested is
    /// animated" — on 0.2.0 the rules' early flush of that request showed the changes without animation.
    func testAnimateWithFlushedUpdatesDeliversWhatStepOnesUpdatersAskedBeforeTheChanges() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var value = 0
        var shown: [String] = []
        var asksAgain = true
        context.onUpdate { animated in
            shown.append("\(value)\(animated ? "a" : "n")")
            if asksAgain {
                asksAgain = false
                context.setNeedsUpdate(animated: false)  // deferred: updaters are running
            }
        }
        context.setNeedsUpdate()
        let changes = {
            value = 1
            context.setNeedsUpdate()
        }
        context.animateWithFlushedUpdates(using: { $0() }, changes)
        XCTAssertEqual(shown, ["0n", "0n", "1a"], "the changes, and only they, animated")
        XCTAssertFalse(context.isUpdatePending)
    }

    // MARK: runningSubscriptions counts every running subscription

    /// `runningSubscriptions` counts every `UpdateSubscription` of the context that still runs: a sequence's
    /// until it ends, is cancelled or released; none once the context is gone. (The typed-message kinds are
    /// counted in `TypedMessageUpdateTests`.)
    func testRunningSubscriptionsCountsEachRunningSubscriptionUntilItEnds() {
        let scheduler = ManualScheduler()
        var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        XCTAssertEqual(context!.runningSubscriptions, 0)
        let (endless, endlessContinuation) = AsyncStream.makeStream(of: Int.self)
        let (other, otherContinuation) = AsyncStream.makeStream(of: Int.self)
        let (finite, finish) = AsyncStream.makeStream(of: Int.self)
        let kept = context!.requestUpdates(from: endless)
        let ending = context!.requestUpdates(from: finite, transaction: UpdateTransaction(animation: .default))
        var released: UpdateSubscription? = context!.requestUpdates(from: other)
        XCTAssertEqual(context!.runningSubscriptions, 3)
        finish.finish()
        waitUntil { context!.runningSubscriptions == 2 }
        XCTAssertEqual(context!.runningSubscriptions, 2, "a finished sequence's subscription ends")
        released = nil
        waitUntil { context!.runningSubscriptions == 1 }
        XCTAssertEqual(context!.runningSubscriptions, 1, "a released subscription ends")
        weak let weakContext = context
        context = nil
        XCTAssertNil(weakContext)
        XCTAssertTrue(kept.isCancelled, "the context's release ends the rest")
        withExtendedLifetime((kept, ending, released, endlessContinuation, otherContinuation)) {}
    }

    // MARK: Recording after a release

    /// Recording notes the first request of each pending delivery per context; a context's release forgets
    /// it. A request made through the context's link on another thread (an Observation change, a
    /// sequence's element) racing the release must not leave an entry behind for a context that is gone
    /// (its address may be reused by a new context, whose first delivery would then name a stale site).
    func testRecordingKeepsNoFirstRequestForAContextReleasedWhileAnotherThreadRequests() {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        UpdateDiagnostics.isRecording = true
        defer { UpdateDiagnostics.isRecording = false }
        let scheduler = ManualScheduler()
        var links: [UpdateStorage] = []
        for _ in 0..<300 {
            var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let link = context!.storage
            links.append(link)
            let started = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                started.signal()
                for _ in 0..<20 { link.setNeedsUpdateFromOutside(nil, site: RequestSite(file: #fileID, line: #line)) }
                done.signal()
            }
            started.wait()
            context = nil
            done.wait()
        }
        _ = try? scheduler.runUntilIdle()
        XCTAssertFalse(
            links.contains { $0.face(RecordedSite.self) != nil },
            "no first request is kept for a context that is gone")
    }
}
