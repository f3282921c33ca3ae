import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Mistakes that used to be silent: reported once through `UpdateDiagnostics` where a request, a delivery or
/// a release shows them, said by `debugDescription` where only time would (nothing polls); and handlers that
/// call back in, or are replaced while reports arrive from other threads.
final class DiagnosticsMisuseTests: XCTestCase {
    private var recorder: ReportRecorder!
    private var scheduler: ManualScheduler!

    override func setUp() {
        recorder = ReportRecorder()
        scheduler = ManualScheduler()
    }

    override func tearDown() {
        recorder.stop()
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

    // MARK: What only time shows: said when asked (nothing polls)

    private final class Badge: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var count = 0
        var renders = 0
        init(label: String, scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: label, scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) { renders += 1 }
    }

    /// A forgotten `startUpdatingView()` reaches no updater: the description says so and names the call; no
    /// report is made (the package cannot tell a forgotten call from a view loaded later without a timer).
    @MainActor func testAForgottenStartUpdatingViewIsNamedByTheDescription() {
        let badge = Badge(label: "forgotten", scheduler: scheduler)
        badge.count = 1
        scheduler.turn()  // delivered to nobody
        XCTAssertEqual(badge.renders, 0)
        let description = badge.updateContext.debugDescription
        XCTAssertTrue(description.contains("0 updaters"), description)
        XCTAssertTrue(description.contains("startUpdatingView()"), description)
        XCTAssertTrue(recorder.all.filter { $0.label == "forgotten" }.isEmpty, "nothing reported")
        badge.startUpdatingView()
        XCTAssertEqual(badge.renders, 1)
        XCTAssertTrue(badge.updateContext.debugDescription.contains("1 updater"), badge.updateContext.debugDescription)
    }

    /// `suspend()` without its `resume()` holds what is pending: the description says it is suspended and
    /// pending.
    func testPendingWhileSuspendedIsSaidByTheDescription() {
        let context = ViewUpdatingContext(label: "suspended", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.suspend()
        context.setNeedsUpdate()
        scheduler.turn()
        let description = context.debugDescription
        XCTAssertTrue(description.contains("suspended"), description)
        XCTAssertTrue(description.contains("pending"), description)
        XCTAssertTrue(recorder.all.filter { $0.label == "suspended" }.isEmpty, "nothing reported")
        context.resume()
    }

    /// A scheduler whose turn is overdue (asked for more than a second ago by its clock): its description and
    /// its contexts' say so; a manual scheduler's clock moves only when the test says.
    func testAnOverdueTurnIsSaidByTheSchedulersAndTheContextsDescription() {
        let context = ViewUpdatingContext(label: "waiting", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.setNeedsUpdate()
        XCTAssertFalse(scheduler.debugDescription.contains("has not begun"), scheduler.debugDescription)
        scheduler.advanceClock(by: 2)
        XCTAssertTrue(scheduler.debugDescription.contains("has not begun"), scheduler.debugDescription)
        XCTAssertTrue(
            scheduler.debugDescription.contains("turn()"), "a manual scheduler's advice: \(scheduler.debugDescription)")
        XCTAssertTrue(context.debugDescription.contains("has not begun"), context.debugDescription)
        XCTAssertTrue(recorder.all.isEmpty, "nothing reported")
        scheduler.turn()
        XCTAssertFalse(scheduler.debugDescription.contains("has not begun"), scheduler.debugDescription)
    }

    /// A background thread's run loop that never runs: its queue's description lists what waits.
    func testABackgroundRunLoopThatNeverRunsIsSaidByTheDescription() {
        let made = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let queue = CoalescingRuntime.Locked<NotificationCoalescingContext?>(nil)
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
        finish.signal()
    }

    // MARK: An update-properties context never bound

    func testAnUnboundPropertiesPassIsReportedOnceWhenItFallsBack() {
        let context = ViewUpdatingContext.passContext(label: "unbound", animated: false, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        for round in 1...3 {
            context.setNeedsUpdate()
            spinMainQueue { deliveries >= round }
        }
        XCTAssertEqual(deliveries, 3, "the fallback delivers")
        let reports = recorder.reports(label: "unbound", kind: .unboundPropertiesPass)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("deliverInUpdateProperties(of:)") == true)

        let bound = ViewUpdatingContext.passContext(label: "bound", animated: false, refreshEvents: [])
        bound.bindPass {}
        bound.setNeedsUpdate()
        spinMainQueue { true }  // four passes: a report would have come by then
        XCTAssertTrue(recorder.reports(label: "bound").isEmpty)
    }

    /// Four passes of the main run loop, then until `done` (bounded: the fallback is main-queue hops away, and
    /// a loaded machine or a sanitizer may need more passes).
    private func spinMainQueue(until done: () -> Bool) {
        for _ in 0..<4 { RunLoop.main.run(until: Date()) }
        spinMainLoop(timeout: 10, until: done)
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
