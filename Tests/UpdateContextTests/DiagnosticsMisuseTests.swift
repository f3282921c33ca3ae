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

    // MARK: Reports that ride on events (nothing polls), and what nothing touches: said when asked

    private final class Badge: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var count = 0
        var renders = 0
        init(label: String, scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: label, scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) { renders += 1 }
    }

    /// A `ViewUpdating` object that never called `startUpdatingView()`: its request is delivered to no updater,
    /// which is reported once, naming the call; its description says it too.
    @MainActor func testAForgottenStartUpdatingViewIsReportedOnceItsRequestIsDelivered() {
        let badge = Badge(label: "forgotten", scheduler: scheduler)
        badge.count = 1
        XCTAssertTrue(recorder.reports(label: "forgotten").isEmpty, "not before the delivery")
        scheduler.turn()  // delivered to nobody
        XCTAssertEqual(badge.renders, 0)
        var reports = recorder.reports(label: "forgotten", kind: .nothingConnected)
        XCTAssertEqual(reports.count, 1, "\(recorder.all)")
        XCTAssertTrue(reports.first?.message.contains("startUpdatingView()") == true, "\(reports)")
        badge.setNeedsUpdate()  // the protocol's request: the owner again
        scheduler.turn()
        reports = recorder.reports(label: "forgotten", kind: .nothingConnected)
        XCTAssertEqual(reports.count, 1, "once")
        let description = badge.updateContext.debugDescription
        XCTAssertTrue(description.contains("0 updaters"), description)
        XCTAssertTrue(description.contains("startUpdatingView()"), description)
        badge.startUpdatingView()
        XCTAssertEqual(badge.renders, 1)
        XCTAssertTrue(badge.updateContext.debugDescription.contains("1 updater"), badge.updateContext.debugDescription)
    }

    /// An owner whose changes all come from a background producer is reported too: the request carries its owner
    /// through the inbox, seen on the main thread when the turn applies it.
    @MainActor func testAForgottenStartUpdatingViewIsReportedWhenItsChangesComeFromAnotherThread() {
        let badge = Badge(label: "fed elsewhere", scheduler: scheduler)
        nonisolated(unsafe) let owner = badge
        for value in 1...3 {
            onAnotherThread { owner.count = value }
            scheduler.turn()  // requested and delivered to nobody
        }
        XCTAssertEqual(badge.renders, 0)
        XCTAssertEqual(recorder.reports(label: "fed elsewhere", kind: .nothingConnected).count, 1, "\(recorder.all)")
        badge.startUpdatingView()
        XCTAssertEqual(badge.renders, 1, "the first render, at once")
        onAnotherThread { owner.count = 4 }
        scheduler.turn()
        XCTAssertEqual(badge.renders, 2)
        XCTAssertEqual(recorder.reports(label: "fed elsewhere", kind: .nothingConnected).count, 1, "once")
    }

    /// The owner rides with another thread's request however the inbox takes it: animated in a scope (the
    /// request carries the scope's transaction), or merged into a request that something else made first in
    /// the cycle (its model's `setNeedsUpdate()`).
    @MainActor func testAForgottenStartUpdatingViewIsReportedWhenItsOtherThreadRequestIsScopedOrMerged() {
        for merged in [false, true] {
            let label = merged ? "merged" : "scoped"
            let badge = Badge(label: label, scheduler: scheduler)
            nonisolated(unsafe) let owner = badge
            for value in 1...3 {
                onAnotherThread {
                    if merged {
                        owner.updateContext.setNeedsUpdate()  // the model's request: no owner
                        owner.count = value
                    } else {
                        withUpdateAnimation { owner.count = value }
                    }
                }
                scheduler.turn()  // requested and delivered to nobody
            }
            XCTAssertEqual(badge.renders, 0)
            XCTAssertEqual(recorder.reports(label: label, kind: .nothingConnected).count, 1, "\(recorder.all)")
        }
    }

    /// An owner that connected once and then removed its updaters, and a context no `ViewUpdating` object
    /// requests through, are not reported when a delivery reaches no updater: only a `startUpdatingView()` never
    /// called is.
    @MainActor func testADeliveryToNobodyIsReportedOnlyForAnOwnerThatNeverConnected() {
        let badge = Badge(label: "stopped", scheduler: scheduler)
        badge.startUpdatingView()
        badge.updateContext.removeUpdaters()
        badge.count = 2
        scheduler.turn()
        let plain = ViewUpdatingContext(label: "plain", scheduler: scheduler, refreshEvents: [])
        plain.setNeedsUpdate()
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "stopped").isEmpty, "\(recorder.all)")
        XCTAssertTrue(recorder.reports(label: "plain").isEmpty, "\(recorder.all)")
    }

    /// A request on a context suspended for more than a second (by its scheduler's clock) is reported once; one
    /// before that second is not.
    func testARequestOnAContextSuspendedForOverASecondIsReportedOnce() {
        let context = ViewUpdatingContext(label: "suspended", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.suspend()
        scheduler.advanceClock(by: 0.5)
        context.setNeedsUpdate()
        XCTAssertTrue(recorder.reports(label: "suspended").isEmpty, "half a second: \(recorder.all)")
        scheduler.advanceClock(by: 0.6)
        context.setNeedsUpdate()  // pending already: a suspended context takes no fast path
        let reports = recorder.reports(label: "suspended", kind: .unbalancedSuspend)
        XCTAssertEqual(reports.count, 1, "\(recorder.all)")
        XCTAssertTrue(reports.first?.message.contains("resume()") == true, "\(reports)")
        scheduler.advanceClock(by: 5)
        context.setNeedsUpdate(animated: false)
        XCTAssertEqual(recorder.reports(label: "suspended", kind: .unbalancedSuspend).count, 1, "once")
        let description = context.debugDescription
        XCTAssertTrue(description.contains("suspended"), description)
        XCTAssertTrue(description.contains("pending"), description)
        context.resume()
        XCTAssertFalse(context.isUpdatePending)
    }

    /// A suspended context that nothing requests says so only when asked: no event sees it.
    func testASuspendedContextNothingTouchesIsSaidByItsDescriptionOnly() {
        let context = ViewUpdatingContext(label: "untouched", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.setNeedsUpdate()
        context.suspend()
        scheduler.advanceClock(by: 5)
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "untouched").isEmpty, "\(recorder.all)")
        XCTAssertTrue(context.debugDescription.contains("suspended"), context.debugDescription)
        context.resume()
    }

    /// A context released while suspended with an update pending says "suspended" in its one report.
    func testAContextReleasedWhileSuspendedSaysSoInItsOneReport() {
        var context: ViewUpdatingContext? = ViewUpdatingContext(
            label: "released suspended", scheduler: scheduler, refreshEvents: [])
        context?.onUpdate { _ in }
        context?.suspend()
        context?.setNeedsUpdate()
        context = nil
        let reports = recorder.reports(label: "released suspended")
        XCTAssertEqual(reports.map(\.kind), [.releasedWithPendingUpdate], "\(recorder.all)")
        XCTAssertTrue(reports.first?.message.contains("suspended") == true, "\(reports)")
        scheduler.turn()
    }

    /// A scheduler whose asked-for turn is more than a second late (by its clock) is reported once, when another
    /// thread's request sees it; its description and its contexts' say so too.
    func testALateTurnIsReportedOnceWhenAnotherThreadRequests() {
        let context = ViewUpdatingContext(label: "waiting", scheduler: scheduler, refreshEvents: [])
        let other = ViewUpdatingContext(label: "other", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        other.onUpdate { _ in }
        context.setNeedsUpdate()
        onAnotherThread { other.setNeedsUpdate() }
        XCTAssertTrue(recorder.reports(label: scheduler.label).isEmpty, "in time: \(recorder.all)")
        scheduler.advanceClock(by: 2)
        onAnotherThread { context.setNeedsUpdate(animated: true) }
        let reports = recorder.reports(label: scheduler.label, kind: .schedulerNotTurning)
        XCTAssertEqual(reports.count, 1, "\(recorder.all)")
        XCTAssertTrue(reports.first?.message.contains("turn()") == true, "a manual scheduler's advice: \(reports)")
        XCTAssertTrue(scheduler.debugDescription.contains("has not begun"), scheduler.debugDescription)
        XCTAssertTrue(context.debugDescription.contains("has not begun"), context.debugDescription)
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .schedulerNotTurning).count, 1, "once")
        scheduler.turn()
        XCTAssertFalse(scheduler.debugDescription.contains("has not begun"), scheduler.debugDescription)
    }

    /// A background producer feeding one screen while the main thread does not turn (Swift Testing on Linux, an
    /// async main): only its first request lists the context, and every later one still looks at the clock, so
    /// the late turn is reported by the producer's next request.
    func testALateTurnIsNoticedByAnotherThreadsRequestOnAContextAlreadyWaiting() {
        let context = ViewUpdatingContext(label: "fed", scheduler: scheduler, refreshEvents: [])
        var shown: [Int] = []
        let value = NotificationCoalescing.Locked(0)
        context.onUpdate { _ in shown.append(value.withLock { $0 }) }
        onAnotherThread {
            value.withLock { $0 = 1 }
            context.setNeedsUpdate()  // lists the context, asks for the turn
        }
        scheduler.advanceClock(by: 2)
        onAnotherThread {
            value.withLock { $0 = 2 }
            context.setNeedsUpdate(animated: true)  // the context waits already
        }
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .schedulerNotTurning).count, 1, "\(recorder.all)")
        onAnotherThread { context.setNeedsUpdate() }
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .schedulerNotTurning).count, 1, "once")
        scheduler.turn()
        XCTAssertEqual(shown, [2], "one delivery, showing the producer's last value")
    }

    /// On the scheduler's own thread a late turn is noticed cheaply: at every 16th context newly listed while the
    /// turn is asked for (no clock read per request).
    func testALateTurnIsNoticedByContextsNewlyListedOnItsThread() {
        let contexts = (0..<17).map {
            ViewUpdatingContext(label: "listed \($0)", scheduler: scheduler, refreshEvents: [])
        }
        contexts[0].setNeedsUpdate()  // asks for the turn
        scheduler.advanceClock(by: 2)
        for context in contexts[1..<16] { context.setNeedsUpdate() }
        XCTAssertTrue(recorder.reports(label: scheduler.label).isEmpty, "15 listings: \(recorder.all)")
        contexts[16].setNeedsUpdate()
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .schedulerNotTurning).count, 1, "\(recorder.all)")
        scheduler.turn()
    }

    /// A description asked while the turn is late reports it (once); a turn that begins late, after a hang, is
    /// not reported.
    func testALateTurnIsReportedWhenADescriptionIsAskedButNotWhenItBegins() {
        let context = ViewUpdatingContext(label: "hung", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.setNeedsUpdate()
        scheduler.advanceClock(by: 2)
        scheduler.turn()  // late, after a hang: not reported
        XCTAssertTrue(recorder.reports(label: scheduler.label).isEmpty, "\(recorder.all)")
        context.setNeedsUpdate()
        scheduler.advanceClock(by: 2)
        _ = scheduler.debugDescription
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .schedulerNotTurning).count, 1, "\(recorder.all)")
        scheduler.turn()
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
