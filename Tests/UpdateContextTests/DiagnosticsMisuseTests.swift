import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Mistakes that used to be silent, each reported once through `UpdateDiagnostics`; the watchdog is
/// ticked by hand (each tick stands for a second); and handlers that call back in, or are replaced while
/// reports arrive from other threads.
final class DiagnosticsMisuseTests: XCTestCase {
    private var recorder: ReportRecorder!
    private var scheduler: ManualScheduler!

    override func setUp() {
        recorder = ReportRecorder()
        scheduler = ManualScheduler()
        Watchdog.shared.isAutomatic = false
    }

    override func tearDown() {
        recorder.stop()
        Watchdog.shared.isAutomatic = true
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = true
    }

    // MARK: Released with an update pending

    func testReleasedWithAnUpdatePendingIsReportedOnce() {
        var context: ViewUpdatingContext? = ViewUpdatingContext(label: "dropped", scheduler: scheduler)
        context?.onUpdate { _ in }
        context?.setNeedsUpdate()
        context = nil
        let reports = recorder.reports(label: "dropped", kind: .releasedWithPendingUpdate)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("updateIfNeeded()") == true)

        var delivered: ViewUpdatingContext? = ViewUpdatingContext(label: "delivered", scheduler: scheduler)
        delivered?.setNeedsUpdate()
        scheduler.turn()
        delivered = nil
        XCTAssertTrue(recorder.reports(label: "delivered").isEmpty, "nothing was pending")
    }

    func testReleasedOnAnotherThreadWithARequestPendingThereIsReported() {
        let box = NotificationCoalescing.Locked<ViewUpdatingContext?>(
            ViewUpdatingContext(label: "far", scheduler: scheduler))
        onAnotherThread {
            box.withLock { $0 }?.setNeedsUpdate()
            box.withLock { $0 = nil }
        }
        XCTAssertEqual(recorder.reports(label: "far", kind: .releasedWithPendingUpdate).count, 1)
        scheduler.turn()
    }

    // MARK: A forgotten startUpdatingView()

    private final class Badge: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var count = 0
        var renders = 0
        init(label: String, scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: label, scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) { renders += 1 }
    }

    /// Forgetting `startUpdatingView()` is not silent: requests that reach no updater for a second are
    /// reported once, naming the call, and the description says what "0 updaters" means there.
    func testAForgottenStartUpdatingViewIsReportedOnce() {
        let badge = Badge(label: "forgotten", scheduler: scheduler)
        badge.count = 1
        scheduler.turn()  // delivered to nobody
        XCTAssertTrue(
            badge.updateContext.debugDescription.contains("has not called startUpdatingView()"),
            badge.updateContext.debugDescription)
        Watchdog.shared.tick()
        XCTAssertTrue(recorder.reports(label: "forgotten").isEmpty, "not a second yet")
        Watchdog.shared.tick()
        let reports = recorder.reports(label: "forgotten", kind: .nothingConnected)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("startUpdatingView()") == true, "\(reports)")
        badge.count = 2
        scheduler.turn()
        for _ in 0..<3 { Watchdog.shared.tick() }
        XCTAssertEqual(recorder.reports(label: "forgotten", kind: .nothingConnected).count, 1, "once")
    }

    /// Connected in time (a view loaded a moment after its controller was made): nothing is reported.
    func testStartUpdatingViewCalledWithinASecondIsNotReported() {
        let badge = Badge(label: "in time", scheduler: scheduler)
        badge.count = 1
        scheduler.turn()
        Watchdog.shared.tick()
        onMainActor(badge) { $0.startUpdatingView() }
        for _ in 0..<3 { Watchdog.shared.tick() }
        XCTAssertTrue(recorder.reports(label: "in time").isEmpty)
        XCTAssertEqual(badge.renders, 1)
        XCTAssertFalse(badge.updateContext.debugDescription.contains("startUpdatingView()"))
    }

    /// A plain context with no updater (not a ViewUpdating owner's) is not blamed on startUpdatingView().
    func testAPlainContextWithoutUpdatersIsNotBlamedOnStartUpdatingView() {
        let context = ViewUpdatingContext(label: "plain", scheduler: scheduler, refreshEvents: [])
        context.setNeedsUpdate()
        scheduler.turn()
        for _ in 0..<3 { Watchdog.shared.tick() }
        XCTAssertTrue(recorder.reports(label: "plain").isEmpty)
        XCTAssertTrue(context.debugDescription.contains("0 updaters: requests reach nobody"), context.debugDescription)
    }

    // MARK: suspend() without resume()

    func testPendingWhileSuspendedForASecondIsReportedOnce() {
        let context = ViewUpdatingContext(label: "suspended", scheduler: scheduler, refreshEvents: [])
        context.suspend()
        Watchdog.shared.tick()  // suspended, nothing pending: fine
        XCTAssertFalse(Watchdog.shared.isWatching(context.storage), "suspended with nothing pending: no timer")
        context.setNeedsUpdate()
        XCTAssertTrue(Watchdog.shared.isWatching(context.storage))
        Watchdog.shared.tick()  // pending: suspicious
        XCTAssertTrue(recorder.reports(label: "suspended").isEmpty, "not a second yet")
        Watchdog.shared.tick()  // a second later, still: reported
        XCTAssertEqual(recorder.reports(label: "suspended", kind: .unbalancedSuspend).count, 1)
        for _ in 0..<3 { Watchdog.shared.tick() }
        XCTAssertEqual(recorder.reports(label: "suspended", kind: .unbalancedSuspend).count, 1, "once")
        XCTAssertFalse(Watchdog.shared.isWatching(context.storage), "reported: no longer watched")
        context.resume()
    }

    func testSuspendingWithAnUpdatePendingIsWatchedToo() {
        let context = ViewUpdatingContext(label: "suspended late", scheduler: scheduler, refreshEvents: [])
        context.setNeedsUpdate()
        context.suspend()
        Watchdog.shared.tick()
        Watchdog.shared.tick()
        XCTAssertEqual(recorder.reports(label: "suspended late", kind: .unbalancedSuspend).count, 1)
        context.resume()
    }

    func testABalancedSuspendIsNotReported() {
        let context = ViewUpdatingContext(label: "balanced", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.suspend()
        context.setNeedsUpdate()
        Watchdog.shared.tick()
        context.resume()
        Watchdog.shared.tick()
        Watchdog.shared.tick()
        context.suspend()  // suspended again, nothing pending
        for _ in 0..<3 { Watchdog.shared.tick() }
        XCTAssertFalse(Watchdog.shared.isWatching(context.storage))
        XCTAssertTrue(recorder.reports(label: "balanced").isEmpty, "\(recorder.reports(label: "balanced"))")
        context.resume()
    }

    // MARK: A scheduler that does not turn

    func testAMainRunLoopThatDoesNotTurnIsReportedWithTheDispatchMainAdvice() {
        RunLoop.main.run(until: Date())  // what earlier tests left pending
        CoalescingScheduler.mainRunLoop.forgetStallReport()  // once per scheduler: an earlier test may have had it
        let context = ViewUpdatingContext(label: "never turned", scheduler: .mainRunLoop, refreshEvents: [])
        context.setNeedsUpdate()
        Watchdog.shared.tick()
        Watchdog.shared.tick()  // a second, and the main run loop has not turned (the test holds it)
        let reports = recorder.reports(label: "main run loop", kind: .schedulerNotTurning)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains(".dispatchMain") == true, reports.first?.message ?? "")
        RunLoop.main.run(until: Date())
        XCTAssertFalse(context.isUpdatePending)
        // A scheduler that turns in time is not reported.
        context.setNeedsUpdate()
        Watchdog.shared.tick()
        RunLoop.main.run(until: Date())
        Watchdog.shared.tick()
        XCTAssertEqual(recorder.reports(label: "main run loop", kind: .schedulerNotTurning).count, 1)
    }

    func testABackgroundRunLoopThatNeverRunsIsReportedAndAManualSchedulerIsNot() {
        let made = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let queue = NotificationCoalescing.Locked<NotificationCoalescingContext?>(nil)
        Thread.detachNewThread {
            queue.withLock { $0 = NotificationCoalescingContext(label: "background queue") }
            made.signal()
            finish.wait()  // holds its thread without running its run loop
            queue.withLock { $0 = nil }
        }
        made.wait()
        let context = queue.withLock { $0 }!
        context.enqueue(Notification(name: Notification.Name("a")))
        XCTAssertTrue(context.debugDescription.contains("1 pending (a)"), context.debugDescription)
        XCTAssertTrue(
            context.scheduler.debugDescription.contains("it has not turned yet"), context.scheduler.debugDescription)
        Watchdog.shared.tick()
        Watchdog.shared.tick()
        let reports = recorder.all.filter { $0.kind == .schedulerNotTurning && $0.label.hasPrefix("run loop of") }
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("background queue waiting") == true, reports.first?.message ?? "")
        finish.signal()

        let manual = ViewUpdatingContext(label: "manual", scheduler: scheduler, refreshEvents: [])
        manual.setNeedsUpdate()
        for _ in 0..<3 { Watchdog.shared.tick() }
        XCTAssertTrue(recorder.all.filter { $0.label == scheduler.label }.isEmpty, "a manual scheduler turns when told")
        scheduler.turn()
    }

    // MARK: An update-properties context never bound

    func testAnUnboundPropertiesPassIsReportedOnceWhenItFallsBack() {
        let context = ViewUpdatingContext.passContext(label: "unbound", animated: false, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        for _ in 0..<3 {
            context.setNeedsUpdate()
            spinMainQueue()
        }
        XCTAssertEqual(deliveries, 3, "the fallback delivers")
        let reports = recorder.reports(label: "unbound", kind: .unboundPropertiesPass)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("deliverInUpdateProperties(of:)") == true)

        let bound = ViewUpdatingContext.passContext(label: "bound", animated: false, refreshEvents: [])
        bound.bindPass {}
        bound.setNeedsUpdate()
        spinMainQueue()
        XCTAssertTrue(recorder.reports(label: "bound").isEmpty)
    }

    private func spinMainQueue() {
        for _ in 0..<4 { RunLoop.main.run(until: Date()) }
    }

    // MARK: Misuse through the same channel

    func testRecoverableMisuseIsReportedThroughTheHandler() {
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = false
        let context = ViewUpdatingContext(label: "misused", scheduler: scheduler, refreshEvents: [])
        let line = #line + 1
        context.resume()
        let reports = recorder.reports(label: "misused", kind: .misuse)
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?.callSite?.line, UInt(line))
        XCTAssertTrue(reports.first?.message.contains("resume()") == true)
    }

    // MARK: Handlers

    func testAHandlerThatCallsBackIntoTheLibraryNeitherDeadlocksNorLosesReports() {
        let context = ViewUpdatingContext(label: "reentrant", scheduler: scheduler, refreshEvents: [])
        let seen = NotificationCoalescing.Locked<[String]>([])
        UpdateDiagnostics.handler = { report in
            guard report.label == "reentrant" else { return }
            // Everything a handler might do: describe, request, record, replace the handler.
            seen.withLock { $0.append(context.debugDescription) }
            context.setNeedsUpdate()
            UpdateDiagnostics.isRecording = UpdateDiagnostics.isRecording
            let current = UpdateDiagnostics.handler
            UpdateDiagnostics.handler = current
        }
        UpdateDiagnostics.isRecording = true
        context.onUpdate { _ in }
        for _ in 0..<10 {
            context.setNeedsUpdate()
            scheduler.turn()
        }
        UpdateDiagnostics.isRecording = false
        XCTAssertGreaterThanOrEqual(seen.withLock { $0.count }, 10)
        scheduler.turn()
    }

    func testReplacingTheHandlerWhileOtherThreadsReportLosesNothing() {
        let threads = 4
        let perThread = 500
        let received = AtomicCounter()
        let handlerA: @Sendable (UpdateDiagnostics.Report) -> Void = { report in
            if report.label == "churn" { received.add() }
        }
        let handlerB: @Sendable (UpdateDiagnostics.Report) -> Void = { report in
            if report.label == "churn" { received.add() }
        }
        UpdateDiagnostics.handler = handlerA
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread.detachNewThread { [scheduler] in
                for _ in 0..<perThread {
                    // A context released with a request pending: one report, made on this thread.
                    let context = ViewUpdatingContext(label: "churn", scheduler: scheduler!, refreshEvents: [])
                    context.setNeedsUpdate()
                }
                done.leave()
            }
        }
        var swaps = 0
        while done.wait(timeout: .now()) == .timedOut {
            UpdateDiagnostics.handler = swaps % 2 == 0 ? handlerB : handlerA
            swaps += 1
        }
        XCTAssertEqual(received.value, threads * perThread, "every report reached one of the handlers")
        scheduler.turn()
    }
}
