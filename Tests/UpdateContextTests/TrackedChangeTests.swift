import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class AccountModel: @unchecked Sendable {
    // @unchecked Sendable: the tests mutate it from one thread at a time.
    var name = "a"
    var mood = 1
    var count = 0
}

/// A canonical-path screen over an `@Observable` model: what each delivery showed, and whether it animated.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class AccountScreen: ViewUpdating, @unchecked Sendable {
    // @unchecked Sendable: touched on the main thread, or by another thread in a step the test waits for.
    let updateContext: ViewUpdatingContext
    let account: AccountModel
    var shown: [String] = []
    /// What `updateView` does besides showing: write back what it read.
    var writesBack: ((AccountModel) -> Void)?

    init(scheduler: ManualScheduler, account: AccountModel) {
        updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        self.account = account
    }

    func updateView(animated: Bool) {
        shown.append("\(account.name) \(account.mood) \(animated ? "a" : "n")")
        writesBack?(account)
    }
}

/// A tracked change is as strong as an `@NeedsUpdate` one: it animates in its scope, completes it, is never
/// left stale silently, and dies with its updater — through the canonical path (`ViewUpdating` +
/// `startUpdatingView()`), on a manual scheduler turned on the main thread.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class TrackedChangeTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var account: AccountModel!
    private var screen: AccountScreen!

    override func setUp() {
        scheduler = ManualScheduler()
        account = AccountModel()
        screen = AccountScreen(scheduler: scheduler, account: account)
    }

    /// Connects the screen: it renders once, at once, and nothing more in that cycle; then forgets it.
    private func startAndSettle() {
        onMainActor(screen) { $0.startUpdatingView() }
        XCTAssertEqual(screen.shown, ["a 1 n"], "rendered once at once")
        XCTAssertEqual(try scheduler.runUntilIdle(), 0, "and nothing more in that cycle")
        screen.shown.removeAll()
    }

    // MARK: Only the first change animated

    /// A plain tracked change, then a change inside `withUpdateTransaction` before the delivery: entering the
    /// animated scope flushes the pending update (UIKit 26's `.flushUpdates`), so the scope's change is
    /// reported, animates, and its completion is told "shown" once, after the delivery that animated it. On
    /// 0.2.0: one delivery, `b 5 n`, and the completion told `.dropped(.noUpdaters)`.
    func testAChangeInAnAnimatedScopeAfterAPlainChangeAnimatesAndCompletesTheScope() {
        startAndSettle()
        let told = SharedLog()
        account.name = "b"
        let screen = UncheckedBox(screen!)
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { told.append("\($0) after \(screen.value.shown.count)") }
        withUpdateTransaction(transaction) { account.mood = 5 }
        XCTAssertEqual(screen.value.shown, ["b 1 n"], "entering the scope showed the plain change, not animated")
        XCTAssertEqual(told.entries, [])
        scheduler.turn()
        XCTAssertEqual(screen.value.shown, ["b 1 n", "b 5 a"])
        XCTAssertEqual(told.entries, ["shown(finished: true) after 2"])
    }

    /// Entering an animated scope with nothing pending delivers nothing; a non-animated scope never flushes.
    func testAScopeFlushesOnlyWhenItAnimatesAndSomethingIsPending() {
        startAndSettle()
        withUpdateAnimation { account.mood = 2 }
        XCTAssertEqual(screen.shown, [], "nothing was pending")
        scheduler.turn()
        account.name = "b"
        withUpdateAnimation(nil) { account.mood = 3 }
        XCTAssertEqual(screen.shown, ["a 2 a"], "a scope without an animation does not flush")
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["a 2 a", "b 3 n"])
    }

    /// The flush reaches every context on the thread, not only those the scope's body changes, and delivers
    /// each as its end of cycle would: what is pending is shown before the scope's changes, and only those
    /// animate (`.flushUpdates`).
    func testTheFlushDeliversEveryPendingContextOnTheThreadAsItsEndOfCycleWould() {
        startAndSettle()
        let other = ViewUpdatingContext(animated: true, scheduler: scheduler, refreshEvents: [])
        let flags = SharedLog()
        other.onUpdate { flags.append($0 ? "a" : "n") }
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        other.setNeedsUpdate()  // its default is animated: delivered animated, as its end of cycle would
        account.name = "b"
        withUpdateAnimation(.linear(duration: 0.2)) { account.mood = 9 }
        XCTAssertEqual(flags.entries, ["a"], "the other context's pending update, as its rules said")
        XCTAssertEqual(screen.shown, ["b 1 n"])
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["b 1 n", "b 9 a"])
        XCTAssertEqual(flags.entries, ["a"], "the scope's change was not the other context's")
    }

    /// Work parked for a private run-loop mode is pending too: after a turn in a mode of the app's own parked
    /// the context (its updaters wait for a common pass), a plain change and then a change inside an animating
    /// scope give the same deliveries as without the private turn — the plain change at the scope's entry, not
    /// animated, and the scope's change animated, its completion told "shown" once.
    func testTheFlushReachesAContextParkedForAPrivateMode() {
        startAndSettle()
        let told = SharedLog()
        let screen = UncheckedBox(screen!)
        account.name = "b"
        scheduler.turn(mode: RunLoop.Mode("private"))
        XCTAssertEqual(screen.value.shown, [], "a private mode delivers no view update")
        account.name = "c"
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { told.append("\($0) after \(screen.value.shown.count)") }
        withUpdateTransaction(transaction) { account.mood = 5 }
        XCTAssertEqual(screen.value.shown, ["c 1 n"], "entering the scope showed the plain change, not animated")
        XCTAssertEqual(told.entries, [])
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(screen.value.shown, ["c 1 n", "c 5 a"])
        XCTAssertEqual(told.entries, ["shown(finished: true) after 2"])
    }

    /// The same with a notification queue's work parked for the private mode beside the context.
    func testTheFlushReachesPendingContextsBesideWorkParkedForAPrivateMode() {
        startAndSettle()
        let queue = NotificationCoalescingContext(scheduler: scheduler)
        queue.enqueue(Notification(name: .init("parked")), forModes: [RunLoop.Mode("private")])
        scheduler.turn()
        let screen = UncheckedBox(screen!)
        account.name = "b"
        withUpdateAnimation { account.mood = 5 }
        XCTAssertEqual(screen.value.shown, ["b 1 n"], "entering the scope showed the plain change, not animated")
        scheduler.turn()
        XCTAssertEqual(screen.value.shown, ["b 1 n", "b 5 a"])
        scheduler.turn(mode: RunLoop.Mode("private"))
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    /// A scope entered inside a turn in a private mode, from a handler of that turn, flushes nothing: view
    /// updates never run while the run loop runs a private mode. The scope's change, made after a plain one
    /// spent the tracking, is shown by the next common pass, unanimated, and its completion is told once that it
    /// requested nothing (the stated limit).
    func testAScopeEnteredInsideAPrivateModeTurnFlushesNothing() {
        startAndSettle()
        let told = SharedLog()
        let screen = UncheckedBox(screen!)
        let account = UncheckedBox(account!)
        let queue = NotificationCoalescingContext(scheduler: scheduler)
        queue.observe(Notification.Name("private work")) { _, _ in
            var transaction = UpdateTransaction(animation: .linear(duration: 0.2))
            transaction.addCompletion { told.append("\($0) after \(screen.value.shown.count)") }
            withUpdateTransaction(transaction) { account.value.mood = 2 }
        }
        account.value.name = "b"  // pending, its tracking spent
        queue.enqueue(Notification(name: .init("private work")), forModes: [RunLoop.Mode("private")])
        scheduler.turn(mode: RunLoop.Mode("private"))  // parks the screen's context, then runs the handler
        XCTAssertEqual(screen.value.shown, [], "nothing delivered in a private mode")
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(screen.value.shown, ["b 2 n"])
        XCTAssertEqual(
            told.entries, ["dropped(UpdateContextCore.UpdateCompletion.DropReason.nothingRequested) after 0"])
    }

    /// A scope whose own transaction neither animates nor completes does not flush, nested in one that
    /// completes too: the body's earlier request is delivered once, at the end of the cycle.
    func testANestedScopeWithoutAnimationOrCompletionDoesNotFlush() {
        startAndSettle()
        var transaction = UpdateTransaction()
        let told = SharedLog()
        transaction.addCompletion { told.append("\($0)") }
        withUpdateTransaction(transaction) {
            account.name = "b"
            withUpdateTransaction(UpdateTransaction()) { account.mood = 3 }
            XCTAssertEqual(screen.shown, [], "nothing delivered inside the body")
        }
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["b 3 n"])
        XCTAssertEqual(told.entries, ["shown(finished: true)"])
    }

    /// A scope with a completion and no animation flushes first too, so its completion waits for the change
    /// made in it whatever changed earlier in the cycle: told "shown" once, after the delivery that shows it.
    func testAScopeWithACompletionAndNoAnimationWaitsForItsTrackedChange() {
        startAndSettle()
        let told = SharedLog()
        let screen = UncheckedBox(screen!)
        account.name = "b"
        var transaction = UpdateTransaction()
        transaction.addCompletion { told.append("\($0) after \(screen.value.shown.count)") }
        withUpdateTransaction(transaction) { account.mood = 2 }
        XCTAssertEqual(screen.value.shown, ["b 1 n"], "entering the scope showed the plain change")
        XCTAssertEqual(told.entries, [], "the scope's change is not shown yet")
        scheduler.turn()
        XCTAssertEqual(screen.value.shown, ["b 1 n", "b 2 n"])
        XCTAssertEqual(told.entries, ["shown(finished: true) after 2"])
    }

    /// The flush is the calling thread's: a scope entered on the thread a context's scheduler turns on (here a
    /// manual scheduler made and turned on another thread) delivers what that context has pending; a scope
    /// entered on the main thread leaves it alone, for its own thread's turn.
    func testTheFlushDeliversTheContextsOfTheThreadThatEntersTheScope() {
        let flags = SharedLog()
        let made = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(label: "elsewhere", scheduler: scheduler, refreshEvents: [])
            context.onUpdate { flags.append($0 ? "a" : "n") }
            context.setNeedsUpdate(animated: false)
            made.signal()
            proceed.wait()  // the main thread's scope has been entered
            flags.append("|")
            withUpdateAnimation { context.setNeedsUpdate() }
            flags.append("|")
            scheduler.turn()
            done.signal()
        }
        made.wait()
        withUpdateAnimation {}
        proceed.signal()
        done.wait()
        XCTAssertEqual(flags.entries, ["|", "n", "|", "a"], "flushed on its own thread, at the scope's entry there")
    }

    /// A scheduler joins the thread's list wherever it lists a request there, also when another thread asked
    /// for the batch's turn first: a context made on another thread, asked there and then on this thread, is
    /// flushed by a scope on this thread.
    func testTheFlushReachesAContextListedHereAfterAnotherThreadAskedForTheTurn() {
        let scheduler = ManualScheduler()
        nonisolated(unsafe) var made: ViewUpdatingContext?
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            made = ViewUpdatingContext(label: "made elsewhere", scheduler: scheduler, refreshEvents: [])
            done.signal()
        }
        done.wait()
        let context = made!
        let flags = SharedLog()
        context.onUpdate { flags.append($0 ? "a" : "n") }
        let asked = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            context.setNeedsUpdate()  // the batch's turn is asked from there
            asked.signal()
        }
        asked.wait()
        context.setNeedsUpdate(animated: false)  // applied and listed on this thread
        flags.append("|")
        withUpdateAnimation {}
        flags.append("|")
        scheduler.turn()
        XCTAssertEqual(flags.entries, ["|", "n", "|"], "listed here: flushed at the scope's entry")
    }

    /// A context made on its scheduler's thread is flushed by a scope there even when its only request came
    /// from another thread and the scheduler never turned: the scheduler joined the thread's list when the
    /// context was made (the flush finds schedulers through the thread's own list, not a process-wide one).
    func testTheFlushReachesAContextOnlyOtherThreadsRequestedBeforeAnyTurn() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(label: "asked elsewhere", scheduler: scheduler, refreshEvents: [])
        let flags = SharedLog()
        context.onUpdate { flags.append($0 ? "a" : "n") }
        let asked = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            context.setNeedsUpdate(animated: false)
            asked.signal()
        }
        asked.wait()
        flags.append("|")
        withUpdateAnimation {}
        flags.append("|")
        scheduler.turn()
        XCTAssertEqual(flags.entries, ["|", "n", "|"], "the other thread's request flushed at the scope's entry")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    // MARK: A Task in a scope

    /// `withUpdateTransaction(t) { Task { await load(); model.x = v } }` — the load-then-animate pattern: the
    /// task holds the scope's completion while it runs, so the completion is told once, "shown", after the
    /// delivery that showed the task's change. On 0.2.0 it was told `.dropped(.noUpdaters)` as the body returned.
    func testATaskCreatedInAScopeHoldsItsCompletionUntilItsChangeIsShown() {
        startAndSettle()
        let told = SharedLog()
        let loaded = DispatchSemaphore(value: 0)
        let screen = UncheckedBox(screen!)
        var transaction = UpdateTransaction(animation: .easeOut(duration: 0.2))
        transaction.addCompletion { told.append("\($0) after \(screen.value.shown.count)") }
        let account = UncheckedBox(account!)
        let taskEnded = AtomicCounter()
        withUpdateTransaction(transaction) {
            Task { @MainActor in
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        loaded.wait()
                        continuation.resume()
                    }
                }
                account.value.mood = 7
                taskEnded.add()
            }
        }
        XCTAssertEqual(told.entries, [], "the task holds the completion")
        loaded.signal()
        spinMainLoop { taskEnded.value == 1 }
        XCTAssertEqual(told.entries, [], "the change is pending, not shown yet")
        scheduler.turn()
        spinMainLoop(timeout: 10) { !told.entries.isEmpty }
        XCTAssertEqual(screen.value.shown, ["a 7 a"])
        XCTAssertEqual(told.entries, ["shown(finished: true) after 1"])
    }

    // MARK: Stale views from other threads

    /// Observation reports at `willSet`, before the store: a writer on another thread that stalls between the
    /// two leaves the view showing the old value. The library cannot learn of the store through public API, so
    /// the first tracked change reported off the main thread for an updater emits one always-on report naming
    /// the updater and the fix; and the fix (a request after the change) shows the value.
    func testAStalledOffMainWriterIsReportedAndARequestAfterTheChangeShowsIt() throws {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        let context = ViewUpdatingContext(label: "gated", scheduler: scheduler, refreshEvents: [])
        let model = GatedValue()
        var seen: [Int] = []
        context.onTrackedUpdate { _ in seen.append(model.value) }
        try scheduler.runUntilIdle()
        let reported = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let stored = DispatchSemaphore(value: 0)
        model.beforeStore = {
            reported.signal()
            release.wait()
        }
        let box = UncheckedBox(model)
        Thread.detachNewThread {
            box.value.value = 1
            stored.signal()
        }
        reported.wait()
        try scheduler.runUntilIdle()  // every delivery reads before the store
        XCTAssertEqual(seen.last, 0)
        release.signal()
        stored.wait()
        model.beforeStore = nil
        let reports = recorder.reports(label: "gated", kind: .trackedChangeOffMainThread)
        XCTAssertEqual(reports.count, 1, "one always-on report: \(recorder.all)")
        XCTAssertTrue(reports.first?.message.contains("main actor") == true, reports.first?.message ?? "")
        XCTAssertTrue(reports.first?.message.contains("setNeedsUpdate") == true, reports.first?.message ?? "")
        // The fix the report names: request after the change.
        context.setNeedsUpdate()
        try scheduler.runUntilIdle()
        XCTAssertEqual(seen.last, 1)
        // Once per updater.
        onAnotherThread { box.value.value = 2 }
        try scheduler.runUntilIdle()
        XCTAssertEqual(recorder.reports(label: "gated", kind: .trackedChangeOffMainThread).count, 1)
    }

    /// The report names a `ViewUpdating` object's updater by its type.
    func testTheOffMainReportNamesTheViewUpdatingType() {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        onMainActor(screen) { $0.startUpdatingView() }
        let account = UncheckedBox(account!)
        onAnotherThread { account.value.name = "far" }
        _ = try? scheduler.runUntilIdle()
        let reports = recorder.all.filter { $0.kind == .trackedChangeOffMainThread }
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("AccountScreen.updateView(animated:)") == true, "\(reports)")
        XCTAssertEqual(screen.shown.last, "far 1 n")
    }

    // MARK: Write-back

    /// A write-back that a listening tracking hears — the tracking of the delivery before, in a delivery a plain
    /// request caused — is delivered again, so the view ends showing the model, and reported once (`writeBack`).
    /// A write-back in the first render, or in a delivery that a tracked change caused, is not heard: the
    /// stated limit (Observation tracks what a closure read only once it has returned).
    func testAWriteBackAListeningTrackingHearsIsDeliveredAgainAndReported() throws {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        screen.writesBack = { account in if account.mood < 2 { account.mood = 2 } }
        onMainActor(screen) { $0.startUpdatingView() }
        try scheduler.runUntilIdle()
        XCTAssertEqual(account.mood, 2)
        XCTAssertEqual(screen.shown, ["a 1 n"], "the first render's write-back is not heard (the stated limit)")
        // A write-back in a delivery that a request caused: the tracking of the delivery before hears it.
        screen.writesBack = { account in if account.mood < 4 { account.mood = 4 } }
        screen.setNeedsUpdate()
        try scheduler.runUntilIdle()
        XCTAssertEqual(screen.shown, ["a 1 n", "a 2 n", "a 4 n"], "the view ends showing the final value")
        let reports = recorder.all.filter { $0.kind == .writeBack }
        XCTAssertEqual(reports.count, 1, "\(recorder.all)")
        XCTAssertTrue(reports.first?.message.contains("AccountScreen.updateView(animated:)") == true, "\(reports)")
        // In a delivery that a tracked change caused, nothing listens: the write-back is the stated limit, and
        // a request after the change outside updateView shows it.
        screen.writesBack = { account in if account.mood < 6 { account.mood = 6 } }
        account.name = "c"
        try scheduler.runUntilIdle()
        XCTAssertEqual(screen.shown.last, "c 4 n")
        screen.writesBack = nil
        screen.setNeedsUpdate()
        try scheduler.runUntilIdle()
        XCTAssertEqual(screen.shown.last, "c 6 n")
        XCTAssertEqual(recorder.all.filter { $0.kind == .writeBack }.count, 1, "reported once per updater")
    }

    /// A write-back every cycle is an update loop: the always-on `updateLoop` report, naming the updater.
    func testAWriteBackEveryCycleIsReportedAsAnUpdateLoopNamingTheUpdater() {
        let recorder = ReportRecorder()
        defer { recorder.stop() }
        screen.writesBack = { account in account.count += 1 }
        onMainActor(screen) { $0.startUpdatingView() }
        screen.setNeedsUpdate()  // a delivery a plain request causes: its write-back is heard, and so on
        for _ in 0..<70 { scheduler.turn() }
        screen.writesBack = nil
        _ = try? scheduler.runUntilIdle()
        let loops = recorder.all.filter { $0.kind == .updateLoop && $0.label == screen.updateContext.label }
        XCTAssertEqual(loops.count, 1, "\(recorder.all)")
        XCTAssertTrue(
            loops.first?.callSite?.file.contains("AccountScreen.updateView(animated:)") == true,
            "\(String(describing: loops.first?.callSite))")
    }

    // MARK: The tracking dies with its updater

    /// Removing the updaters ends the tracking: a later change requests nothing. On 0.2.0 it still requested.
    func testRemovingTheUpdatersEndsTheirTracking() {
        startAndSettle()
        screen.updateContext.removeUpdaters()
        account.name = "b"
        XCTAssertFalse(screen.updateContext.isUpdatePending, "no updater, no tracking")
    }

    /// Removing one tracked updater by its token, and replacing it: one change makes one request, not one per
    /// updater ever registered (on 0.2.0: 101 requests after 100 replacements).
    func testReplacingATrackedUpdaterLeavesOneTracking() {
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let account = account!
        var seen: [String] = []
        var token = context.onTrackedUpdate { _ in seen.append(account.name) }
        scheduler.turn()
        for _ in 0..<100 {
            token.remove()
            token = context.onTrackedUpdate { _ in seen.append(account.name) }
            scheduler.turn()
        }
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        let absorbed = absorbedPerDelivery {
            account.name = "once"
            scheduler.turn()
        }
        XCTAssertEqual(absorbed, ["1"], "one change, one request")
        XCTAssertEqual(seen.last, "once")
        withExtendedLifetime(token) {}
    }

    /// A released screen leaves nothing on a long-lived model: its tracking's registrations go with it (on
    /// 0.2.0 they stayed, holding the context's link, about 1.2 KB per released screen).
    func testAReleasedScreenLeavesNothingOnALongLivedModel() {
        weak var link: UpdateStorage?
        do {
            let screen = AccountScreen(scheduler: scheduler, account: account)
            onMainActor(screen) { $0.startUpdatingView() }
            XCTAssertNoThrow(try scheduler.runUntilIdle())
            link = screen.updateContext.storage
        }
        self.screen = nil
        XCTAssertNil(link, "the model's registrations kept the released context's link")
    }

    /// How many requests each delivery `body` makes absorbed (diagnostics recording, on for `body` only).
    private func absorbedPerDelivery(_ body: () -> Void) -> [String] {
        let reports = SharedLog()
        let old = UpdateDiagnostics.handler
        UpdateDiagnostics.handler = { report in
            if report.kind == .delivery { reports.append("\(report.absorbedRequests ?? -1)") }
        }
        UpdateDiagnostics.isRecording = true
        defer {
            UpdateDiagnostics.isRecording = false
            UpdateDiagnostics.handler = old
        }
        body()
        return reports.entries
    }
}
