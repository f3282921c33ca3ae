import CMallocStats
import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Labels, the always-on reports (update loop, slow updater) and recording, on a scheduler the test turns.
final class DiagnosticsTests: XCTestCase {
    private var recorder: ReportRecorder!
    private var scheduler: ManualScheduler!

    override func setUp() {
        recorder = ReportRecorder()
        scheduler = ManualScheduler()
    }

    override func tearDown() {
        recorder.stop()
        UpdateDiagnostics.isRecording = false
    }

    // MARK: Labels

    func testDefaultLabelsAreTheCreationSite() {
        let line = #line + 1
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        XCTAssertEqual(context.label, "UpdateContextTests/DiagnosticsTests.swift:\(line)")
        let stateLine = #line + 1
        let state = StateUpdatingContext(state: 1, scheduler: scheduler, refreshEvents: [])
        XCTAssertEqual(state.label, "UpdateContextTests/DiagnosticsTests.swift:\(stateLine)")
        let schedulerLine = #line + 1
        let manual = ManualScheduler()
        XCTAssertEqual(manual.label, "UpdateContextTests/DiagnosticsTests.swift:\(schedulerLine)")
        let pacedLine = #line + 1
        let paced = FramePacedScheduler(framesPerSecond: 30)
        XCTAssertEqual(paced.label, "UpdateContextTests/DiagnosticsTests.swift:\(pacedLine)")
        let queueLine = #line + 1
        let queue = NotificationCoalescingContext(scheduler: scheduler)
        XCTAssertEqual(queue.label, "UpdateContextTests/DiagnosticsTests.swift:\(queueLine)")
        // Two contexts from one line share the site's entry, and say the same.
        let twins = (0..<2).map { _ in ViewUpdatingContext(scheduler: scheduler, refreshEvents: []) }
        XCTAssertEqual(twins[0].label, twins[1].label)
        let observingLine = #line + 1
        let observing = NotificationObservingContext(center: NotificationCenter())
        XCTAssertEqual(observing.label, "UpdateContextTests/DiagnosticsTests.swift:\(observingLine)")
        XCTAssertTrue(observing.debugDescription.contains("0 observers on its own center"), observing.debugDescription)
        XCTAssertEqual(NotificationObservingContext(label: "observer").label, "observer")
        XCTAssertEqual(CoalescingScheduler.mainRunLoop.label, "main run loop")
        XCTAssertEqual(CoalescingScheduler.dispatchMain.label, "dispatch main")
        XCTAssertEqual(CoalescingScheduler.framePaced.label, "frame-paced (main display)")
    }

    func testGivenLabelsAreKeptAndFreedWithTheirOwner() {
        XCTAssertEqual(ManualScheduler(label: "clock").label, "clock")
        XCTAssertEqual(NotificationCoalescingContext(label: "badge", scheduler: scheduler).label, "badge")
        XCTAssertEqual(StateUpdatingContext(label: "form", state: 0, scheduler: scheduler).label, "form")
        // Rounds of labelled contexts made and released: a label that outlived its context (about 100 bytes
        // an entry) would grow the heap by megabytes over the rounds; freed with their contexts, it stays put.
        let count = 20_000
        func round() {
            var contexts: [ViewUpdatingContext] = []
            contexts.reserveCapacity(count)
            for index in 0..<count {
                contexts.append(ViewUpdatingContext(label: "row \(index)", scheduler: scheduler, refreshEvents: []))
            }
            XCTAssertEqual(contexts[42].label, "row 42")
        }
        round()
        let before = malloc_stats_bytes_in_use()
        for _ in 0..<3 { round() }
        XCTAssertLessThan(
            malloc_stats_bytes_in_use() - before, count * 8, "a given label's entry goes with its context")
    }

    // MARK: The update loop

    func testAnUpdateLoopIsReportedOnceAfterSixtyConsecutiveSelfRequests() throws {
        let context = ViewUpdatingContext(label: "looping", scheduler: scheduler, refreshEvents: [])
        var requestLine: UInt = 0
        var deliveries = 0
        context.onUpdate { _ in
            deliveries += 1
            requestLine = #line + 1
            context.setNeedsUpdate()  // the mistake: a render that invalidates itself
        }
        context.setNeedsUpdate()
        for _ in 0..<59 { scheduler.turn() }
        XCTAssertEqual(deliveries, 59)
        XCTAssertTrue(recorder.reports(label: "looping", kind: .updateLoop).isEmpty, "59 cycles are not yet a loop")
        scheduler.turn()
        let reports = recorder.reports(label: "looping", kind: .updateLoop)
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?.callSite?.file, "UpdateContextTests/DiagnosticsTests.swift")
        XCTAssertEqual(reports.first?.callSite?.line, requestLine, "it names the re-requesting call site")
        XCTAssertEqual(reports.first?.callSite?.thread, "main")
        XCTAssertTrue(reports.first?.description.contains("looping") == true)
        // Its remedy is one an app on UpdateContextCore alone can find: the frame-paced scheduler is named with
        // the product that has it.
        let message = reports.first?.message ?? ""
        XCTAssertTrue(
            !message.contains(".framePaced") || message.contains("NotificationCoalescing"), "remedy: \(message)")
        for _ in 0..<200 { scheduler.turn() }
        XCTAssertEqual(recorder.reports(label: "looping", kind: .updateLoop).count, 1, "reported once per context")
        XCTAssertEqual(deliveries, 260, "the report changes nothing about delivery")
    }

    func testAContextAskedFromOutsideEveryCycleIsNoLoop() {
        let context = ViewUpdatingContext(label: "busy", scheduler: scheduler, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        for cycle in 0..<500 {
            context.setNeedsUpdate(animated: cycle % 3 == 0)
            if cycle % 7 == 0 { onAnotherThread { context.setNeedsUpdate() } }
            scheduler.turn()
        }
        XCTAssertEqual(deliveries, 500)
        XCTAssertTrue(recorder.reports(label: "busy").isEmpty, "\(recorder.reports(label: "busy"))")
    }

    func testAnInterruptedLoopStartsCountingAgain() {
        let context = ViewUpdatingContext(label: "interrupted", scheduler: scheduler, refreshEvents: [])
        var cycle = 0
        context.onUpdate { _ in
            cycle += 1
            if cycle % 50 != 0 { context.setNeedsUpdate() }  // every 50th cycle does not re-request
        }
        for _ in 0..<400 {
            if !context.isUpdatePending { context.setNeedsUpdate() }
            scheduler.turn()
        }
        XCTAssertEqual(cycle, 400)
        XCTAssertTrue(recorder.reports(label: "interrupted", kind: .updateLoop).isEmpty)
    }

    func testPerFrameWorkOnAFramePacedSchedulerIsNoLoop() {
        let recorder = recorder!
        MainActor.assumeIsolated {
            let paced = FramePacedScheduler(framesPerSecond: 60)
            let context = ViewUpdatingContext(label: "per-frame", scheduler: paced, refreshEvents: [])
            var frames = 0
            context.onUpdate { _ in
                frames += 1
                context.setNeedsUpdate()  // how per-frame work is driven
            }
            context.setNeedsUpdate()
            for _ in 0..<120 { paced.runTurn() }
            XCTAssertEqual(frames, 120)
            XCTAssertTrue(recorder.reports(label: "per-frame", kind: .updateLoop).isEmpty)
            context.removeUpdaters()
        }
    }

    /// A seeded search against a model: whatever mix of self-requests, outside requests, `update()`s and
    /// quiet cycles, the loop is reported exactly when a run of 60 consecutive self-requesting deliveries
    /// first completes, and never otherwise.
    func testTheLoopReportMatchesAModelOfConsecutiveSelfRequests() {
        var seedsWithALoop = 0
        for seed in 1...40 {
            var random = SplitMix64(seed: UInt64(seed))
            let label = "random loop \(seed)"
            let context = ViewUpdatingContext(label: label, scheduler: scheduler, refreshEvents: [])
            var selfRequestProbability = Double.random(in: 0.90...1.0, using: &random)
            var requestAgain = false
            context.onUpdate { _ in
                if requestAgain { context.setNeedsUpdate() }
            }
            var run = 0  // the model: consecutive deliveries that re-requested
            var expectedAt: Int?
            for cycle in 0..<400 {
                if cycle % 100 == 0 { selfRequestProbability = Double.random(in: 0.90...1.0, using: &random) }
                requestAgain = Double.random(in: 0..<1, using: &random) < selfRequestProbability
                if Bool.random(using: &random) { context.setNeedsUpdate(animated: Bool.random(using: &random)) }
                let forced = Int.random(in: 0..<20, using: &random) == 0
                if forced {
                    context.update()
                } else if context.isUpdatePending {
                    scheduler.turn()
                } else {
                    continue  // a quiet cycle: no delivery, the run goes on
                }
                run = requestAgain ? run + 1 : 0
                if run == 60 && expectedAt == nil { expectedAt = cycle }
                let reported = recorder.reports(label: label, kind: .updateLoop).count
                XCTAssertEqual(
                    reported, expectedAt == nil ? 0 : 1, "seed \(seed), cycle \(cycle), run \(run)")
                if reported != (expectedAt == nil ? 0 : 1) { return }
            }
            if expectedAt != nil { seedsWithALoop += 1 }
            context.removeUpdaters()
            scheduler.turn()
        }
        // The search covers both sides: seeds that loop and seeds whose runs break before 60.
        XCTAssertGreaterThan(seedsWithALoop, 5)
        XCTAssertLessThan(seedsWithALoop, 35)
    }

    func testAMillionRequestsAreCountedExactly() {
        UpdateDiagnostics.isRecording = true
        let context = ViewUpdatingContext(label: "million", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        for _ in 0..<1_000_000 { context.setNeedsUpdate() }
        scheduler.turn()
        XCTAssertEqual(recorder.reports(label: "million", kind: .delivery).first?.absorbedRequests, 1_000_000)
    }

    // MARK: Slow turns and slow deliveries

    /// A turn slower than a frame is reported with how long it took and the labels of the contexts it served:
    /// nothing in it is blamed, so a fast context served beside a slow one is named too.
    func testASlowTurnIsReportedWithItsDurationAndTheContextsItServed() {
        let clock: ManualScheduler = scheduler
        let slow = ViewUpdatingContext(label: "slow screen", scheduler: scheduler, refreshEvents: [])
        let fast = ViewUpdatingContext(label: "fast screen", scheduler: scheduler, refreshEvents: [])
        slow.onUpdate { _ in clock.advanceClock(milliseconds: 40) }
        fast.onUpdate { _ in clock.advanceClock(milliseconds: 1) }
        slow.setNeedsUpdate()
        fast.setNeedsUpdate()
        scheduler.turn()
        let reports = recorder.reports(label: scheduler.label, kind: .slowTurn)
        XCTAssertEqual(reports.count, 1, "\(recorder.all)")
        XCTAssertEqual(reports.first?.duration, 0.041)
        XCTAssertTrue(reports.first?.message.contains("a turn took 41.000 ms") == true, "\(reports)")
        XCTAssertTrue(reports.first?.message.contains("\"slow screen\", \"fast screen\"") == true, "\(reports)")
        XCTAssertTrue(recorder.all.filter { $0.kind == .slowUpdater }.isEmpty, "no updater is blamed: \(recorder.all)")
    }

    /// A scheduler reports a slow turn at most once a second, and again after that: a slow launch does not use
    /// the report up.
    func testASlowTurnIsReportedAtMostOnceASecondPerScheduler() {
        let clock: ManualScheduler = scheduler
        var contexts: [ViewUpdatingContext] = []
        for index in 0..<8 {
            let context = ViewUpdatingContext(label: "launch \(index)", scheduler: scheduler, refreshEvents: [])
            context.onUpdate { _ in clock.advanceClock(milliseconds: 100) }
            contexts.append(context)
        }
        for context in contexts {  // eight slow turns in 0.8 s, each serving a context not named yet
            context.setNeedsUpdate()
            scheduler.turn()
        }
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .slowTurn).count, 1, "\(recorder.all)")
        clock.advanceClock(by: 1)
        contexts[7].setNeedsUpdate()
        scheduler.turn()
        let reports = recorder.reports(label: scheduler.label, kind: .slowTurn)
        XCTAssertEqual(reports.count, 2, "a second later, a slow turn is reported again: \(recorder.all)")
        XCTAssertTrue(reports.last?.message.contains("\"launch 7\"") == true, "\(reports)")
    }

    /// A context is named at most once a second, by either report: a slow turn a little over a second after the
    /// last slow turn, but less than a second after a slow delivery outside a turn named one of its contexts,
    /// names only the other.
    func testAContextIsNamedAtMostOnceASecondByEitherReport() {
        let clock: ManualScheduler = scheduler
        let a = ViewUpdatingContext(label: "named twice?", scheduler: scheduler, refreshEvents: [])
        let b = ViewUpdatingContext(label: "named once", scheduler: scheduler, refreshEvents: [])
        a.onUpdate { _ in clock.advanceClock(milliseconds: 40) }
        b.onUpdate { _ in }
        a.setNeedsUpdate()
        scheduler.turn()  // a slow turn naming A
        clock.advanceClock(by: 0.5)
        a.update()  // a slow delivery outside a turn: A again, within the second — not named
        XCTAssertTrue(recorder.reports(label: "named twice?", kind: .slowUpdater).isEmpty, "\(recorder.all)")
        clock.advanceClock(by: 0.6)
        a.update()  // over a second after the turn named it: named
        XCTAssertEqual(recorder.reports(label: "named twice?", kind: .slowUpdater).count, 1, "\(recorder.all)")
        clock.advanceClock(by: 0.1)
        a.setNeedsUpdate()
        b.setNeedsUpdate()
        scheduler.turn()  // over a second after the last slow turn: reported, naming B only
        let turns = recorder.reports(label: scheduler.label, kind: .slowTurn)
        XCTAssertEqual(turns.count, 2, "\(recorder.all)")
        XCTAssertTrue(turns.last?.message.contains("It served \"named once\";") == true, "\(turns)")
    }

    /// A slow turn whose every context was named in the last second says nothing new: no report.
    func testASlowTurnOfContextsNamedInTheLastSecondIsNotReported() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "already named", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in clock.advanceClock(milliseconds: 40) }
        context.update()  // outside a turn: named
        XCTAssertEqual(recorder.reports(label: "already named", kind: .slowUpdater).count, 1)
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: scheduler.label, kind: .slowTurn).isEmpty, "\(recorder.all)")
    }

    /// A delivery outside a turn (`update()`) slower than a frame is timed and named on its own.
    func testADeliveryOutsideATurnSlowerThanAFrameNamesItsContext() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "slow update()", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.onUpdate { _ in clock.advanceClock(milliseconds: 30) }
        context.update()
        let named = recorder.reports(label: "slow update()", kind: .slowUpdater)
        XCTAssertEqual(named.count, 1)
        XCTAssertEqual(named.first?.duration, 0.030)
        XCTAssertTrue(named.first?.message.contains("took 30.000 ms") == true, named.first?.message ?? "")
    }

    /// A delivery made inside another delivery timed on its own (a child's `update()` in its parent's
    /// `update()`) is part of that one's time: the parent is named, not the child.
    func testADeliveryInsideAnotherTimedOneIsPartOfItsTime() {
        let clock: ManualScheduler = scheduler
        let parent = ViewUpdatingContext(label: "parent", scheduler: scheduler, refreshEvents: [])
        let child = ViewUpdatingContext(label: "child", scheduler: scheduler, refreshEvents: [])
        child.onUpdate { _ in clock.advanceClock(milliseconds: 40) }
        parent.onUpdate { _ in child.update() }
        parent.update()
        XCTAssertEqual(recorder.reports(label: "parent", kind: .slowUpdater).count, 1, "\(recorder.all)")
        XCTAssertTrue(recorder.reports(label: "child").isEmpty, "\(recorder.all)")
    }

    /// Nothing inside a turn is blamed: a view delivered by a coalesced notification's observer (`update()`
    /// inside the turn) is not timed on its own; the slow turn names the queue it served.
    func testADeliveryInsideATurnIsTheTurnsTime() {
        let clock: ManualScheduler = scheduler
        let queue = NotificationCoalescingContext(label: "model queue", scheduler: scheduler)
        let view = ViewUpdatingContext(label: "observed screen", scheduler: scheduler, refreshEvents: [])
        view.onUpdate { _ in clock.advanceClock(milliseconds: 40) }
        queue.observe(Notification.Name("changed")) { _, _ in view.update() }
        queue.enqueue(Notification(name: Notification.Name("changed")))
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "observed screen").isEmpty, "\(recorder.all)")
        let turns = recorder.reports(label: scheduler.label, kind: .slowTurn)
        XCTAssertEqual(turns.count, 1, "\(recorder.all)")
        XCTAssertTrue(turns.first?.message.contains("\"model queue\"") == true, "\(turns)")
    }

    /// A manual scheduler's clock moves only when told, so a report says what the test's updater took and not
    /// what the machine added: here the updater really sleeps 20 ms and says it took 40 ms.
    func testAManualSchedulersClockMovesOnlyWhenTold() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "exact", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in
            Thread.sleep(forTimeInterval: 0.020)
            clock.advanceClock(milliseconds: 40)
        }
        context.update()
        let reports = recorder.reports(label: "exact", kind: .slowUpdater)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.message.contains("took 40.000 ms") == true, "\(reports)")
        XCTAssertEqual(reports.first?.duration, 0.040)
    }

    /// Any finite duration moves a manual scheduler's clock; a bad one is reported and moves nothing.
    func testAdvancingAManualClockTakesAnyFiniteDuration() {
        UpdateDiagnostics.stopsAtMisuseInDebugBuilds = false
        defer { UpdateDiagnostics.stopsAtMisuseInDebugBuilds = true }
        let clock = ManualScheduler(label: "clock")
        let before = clock.now()
        clock.advanceClock(by: 1e9)
        XCTAssertEqual(clock.now() &- before, 1_000_000_000_000_000_000)
        XCTAssertTrue(recorder.reports(label: "clock", kind: .misuse).isEmpty, "\(recorder.all)")
        clock.advanceClock(by: -1)
        clock.advanceClock(by: .nan)
        XCTAssertEqual(clock.now() &- before, 1_000_000_000_000_000_000)
        XCTAssertEqual(recorder.reports(label: "clock", kind: .misuse).count, 2)
    }

    /// The real clock, in the direction that cannot flake: a sleep of 30 ms lasts at least 30 ms.
    func testADeliveryThatReallySleepsIsReported() {
        let context = ViewUpdatingContext(label: "sleeper", scheduler: .mainRunLoop, refreshEvents: [])
        context.onUpdate { _ in Thread.sleep(forTimeInterval: 0.030) }
        context.update()
        let reports = recorder.reports(label: "sleeper", kind: .slowUpdater)
        XCTAssertEqual(reports.count, 1)
        XCTAssertGreaterThanOrEqual(reports.first?.duration ?? 0, 0.030)
    }

    /// A turn and a delivery outside a turn that each take less than a frame are not reported, however many
    /// updaters they call.
    func testFastTurnsAndDeliveriesAreNotReported() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "fast", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in clock.advanceClock(milliseconds: 7) }
        context.onUpdate { _ in clock.advanceClock(milliseconds: 7) }  // 14 ms in all
        context.update()
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "fast").isEmpty, "\(recorder.all)")
        XCTAssertTrue(recorder.reports(label: scheduler.label).isEmpty, "\(recorder.all)")
    }

    // MARK: Recording

    func testRecordingReportsEachDeliveryWithItsFirstRequestAndCount() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "recorded", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in clock.advanceClock(milliseconds: 2) }
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "recorded", kind: .delivery).isEmpty, "off by default")

        UpdateDiagnostics.isRecording = true
        let firstLine = #line + 1
        context.setNeedsUpdate()
        context.setNeedsUpdate()
        context.setNeedsUpdate(animated: true)
        onAnotherThread { context.setNeedsUpdate() }
        scheduler.turn()
        var reports = recorder.reports(label: "recorded", kind: .delivery)
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?.absorbedRequests, 4, "three on the main thread, one from another")
        XCTAssertEqual(reports.first?.callSite?.line, UInt(firstLine))
        XCTAssertEqual(reports.first?.callSite?.file, "UpdateContextTests/DiagnosticsTests.swift")
        XCTAssertEqual(reports.first?.callSite?.thread, "main")
        XCTAssertEqual(reports.first?.animated, true)
        XCTAssertNil(reports.first?.transaction)
        XCTAssertGreaterThanOrEqual(reports.first?.duration ?? 0, 0.002)

        // The first request from another thread names that thread.
        let otherLine = #line + 1
        onAnotherThread { context.setNeedsUpdate() }
        context.setNeedsUpdate()
        scheduler.turn()
        reports = recorder.reports(label: "recorded", kind: .delivery)
        XCTAssertEqual(reports.count, 2)
        XCTAssertEqual(reports.last?.callSite?.line, UInt(otherLine))
        XCTAssertNotEqual(reports.last?.callSite?.thread, "main")
        XCTAssertEqual(reports.last?.absorbedRequests, 2)
        XCTAssertEqual(reports.last?.animated, false)

        // A transaction is named; update() is a request too.
        context.setNeedsUpdate(transaction: UpdateTransaction(animation: .easeInOut(duration: 0.2)))
        scheduler.turn()
        context.update()
        reports = recorder.reports(label: "recorded", kind: .delivery)
        XCTAssertEqual(reports.count, 4)
        XCTAssertNotNil(reports[2].transaction)
        XCTAssertEqual(reports[3].absorbedRequests, 1)

        UpdateDiagnostics.isRecording = false
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(recorder.reports(label: "recorded", kind: .delivery).count, 4)
    }

    /// The delivery an animating scope's entry makes of what was pending is recorded as what it is: a
    /// scope-entry flush, not an end-of-cycle delivery; the scope's own change is the end of cycle's.
    func testARecordedScopeEntryFlushSaysWhatItIs() {
        let context = ViewUpdatingContext(label: "flushed", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        UpdateDiagnostics.isRecording = true
        context.setNeedsUpdate()
        withUpdateAnimation { context.setNeedsUpdate() }
        var reports = recorder.reports(label: "flushed", kind: .delivery)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(
            reports.first?.message.hasPrefix("scope-entry flush delivery #1, not animated") == true,
            reports.first?.message ?? "no report")
        scheduler.turn()
        reports = recorder.reports(label: "flushed", kind: .delivery)
        XCTAssertEqual(reports.count, 2)
        XCTAssertTrue(
            reports.last?.message.hasPrefix("end of cycle delivery #2, animated") == true,
            reports.last?.message ?? "no report")
    }

    /// The rules' early flush and the delivery after it each name the request they absorbed: the explicit
    /// `false`, then the animated request that flushed it.
    func testAnEarlyFlushAndTheDeliveryAfterItNameTheirOwnFirstRequests() {
        let context = ViewUpdatingContext(label: "flush sites", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        UpdateDiagnostics.isRecording = true
        let lineA = #line + 1
        context.setNeedsUpdate(animated: false)
        let lineB = #line + 1
        context.setNeedsUpdate(animated: true)
        scheduler.turn()
        let reports = recorder.reports(label: "flush sites", kind: .delivery)
        XCTAssertEqual(reports.count, 2)
        XCTAssertEqual(reports.first?.callSite?.line, UInt(lineA), "the early flush absorbed the false")
        XCTAssertEqual(reports.first?.absorbedRequests, 1)
        XCTAssertEqual(reports.last?.callSite?.line, UInt(lineB), "the end of cycle absorbed the true")
        XCTAssertEqual(reports.last?.absorbedRequests, 1)
    }

    // MARK: The handler

    /// Replacing the handler releases the old one outside the handler's lock: an old handler whose captures'
    /// deinit reads the handler (as a context released there does when it reports) must not deadlock.
    func testReplacingTheHandlerReleasesTheOldOneOutsideItsLock() {
        final class ReadsTheHandlerWhenReleased: Sendable {
            deinit { _ = UpdateDiagnostics.handler }
        }
        let saved = UpdateDiagnostics.handler
        defer { UpdateDiagnostics.handler = saved }
        func install() {  // the handler holds the only reference
            let captured = ReadsTheHandlerWhenReleased()
            UpdateDiagnostics.handler = { _ in withExtendedLifetime(captured) {} }
        }
        install()
        let replaced = expectation(description: "replaced")
        Thread.detachNewThread {
            UpdateDiagnostics.handler = { _ in }  // releases the last reference to `captured`
            replaced.fulfill()
        }
        wait(for: [replaced], timeout: 10)
    }

    /// Recording's line prints the delivery's transaction (the README promises "its flag or transaction").
    func testARecordedDeliveryLinePrintsItsTransaction() {
        let report = UpdateDiagnostics.Report(
            kind: .delivery, label: "card", message: "end of cycle delivery #2, animated",
            transaction: "UpdateTransaction(animation: spring(0.4, bounce: 0.2), 1 completion)")
        XCTAssertTrue(report.description.contains("with UpdateTransaction(animation: spring(0.4"), report.description)
    }

    /// A token's description on another thread racing the context's release on the main thread reads
    /// nothing freed: the scheduler, held only by the context, goes with it (AddressSanitizer checks this in
    /// `.ci/run`; a plain build may read stale memory and pass).
    func testATokensDescriptionRacingTheContextsReleaseReadsNothingFreed() {
        for _ in 0..<300 {
            var context: ViewUpdatingContext? = ViewUpdatingContext(
                label: "racing", scheduler: ManualScheduler(), refreshEvents: [])
            let token = context!.onUpdate { _ in }
            let started = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                started.signal()
                for _ in 0..<20 { _ = token.debugDescription }
                done.signal()
            }
            started.wait()
            context = nil
            done.wait()
            XCTAssertTrue(token.debugDescription.contains("released"), token.debugDescription)
        }
    }

    // MARK: debugDescription

    /// Inside a turn, a scheduler's description lists the contexts the turn has not reached yet as waiting (they
    /// wait on it as much as the next turn's do); the one whose updater is running is not listed.
    func testASchedulersDescriptionInsideATurnListsWhatTheTurnHasNotReached() {
        let clock = scheduler!
        let first = ViewUpdatingContext(label: "first in turn", scheduler: scheduler, refreshEvents: [])
        let second = ViewUpdatingContext(label: "second in turn", scheduler: scheduler, refreshEvents: [])
        var text = ""
        first.onUpdate { _ in text = clock.debugDescription }
        second.onUpdate { _ in }
        first.setNeedsUpdate()
        second.setNeedsUpdate()
        scheduler.turn()
        XCTAssertTrue(text.contains("waiting: second in turn"), text)
        XCTAssertFalse(text.contains("first in turn"), text)
    }

    func testDescriptionOfASuspendedContext() {
        let context = ViewUpdatingContext(label: "hidden", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        XCTAssertTrue(context.debugDescription.contains("no update pending"), context.debugDescription)
        // Nothing asked the scheduler to turn: no advice about run loops (it would be wrong in an app).
        XCTAssertTrue(context.debugDescription.contains("no turn is asked for"), context.debugDescription)
        XCTAssertFalse(context.debugDescription.contains(".dispatchMain"), context.debugDescription)
        context.suspend()
        context.suspend()
        context.setNeedsUpdate(animated: true)
        let text = context.debugDescription
        XCTAssertTrue(text.contains("\"hidden\""), text)
        XCTAssertTrue(text.contains("update pending (animated"), text)
        XCTAssertTrue(text.contains("suspended (2 suspend() calls without resume()"), text)
        XCTAssertTrue(text.contains("1 updater"), text)
        XCTAssertTrue(text.contains("no delivery yet"), text)
        context.resume()
        context.resume()
        XCTAssertTrue(context.debugDescription.contains("1 delivery so far"), context.debugDescription)
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertTrue(
            context.debugDescription.contains("it ran in the scheduler's last turn"), context.debugDescription)
        let other = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        for _ in 0..<3 {
            other.setNeedsUpdate()
            scheduler.turn()
        }
        XCTAssertTrue(context.debugDescription.contains("it last ran 3 turns ago"), context.debugDescription)
        XCTAssertFalse(context.debugDescription.contains("suspended"), context.debugDescription)
    }

    func testDescriptionOfAContextParkedForAMode() {
        let context = ViewUpdatingContext(label: "parked", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        context.setNeedsUpdate()
        scheduler.turn(mode: RunLoop.Mode("tracking"))  // a private mode: view updates wait
        let text = context.debugDescription
        XCTAssertTrue(text.contains("parked: its work waits for a pass in a common run-loop mode"), text)
        XCTAssertTrue(scheduler.debugDescription.contains("parked until a turn in"), scheduler.debugDescription)
        XCTAssertTrue(scheduler.debugDescription.contains("parked"), scheduler.debugDescription)
        scheduler.turn()
        XCTAssertFalse(context.debugDescription.contains("parked:"), context.debugDescription)
    }

    func testDescriptionOfAReleasedContextThroughItsToken() {
        var context: ViewUpdatingContext? = ViewUpdatingContext(label: "gone", scheduler: scheduler)
        let token = context!.onUpdate { _ in }
        XCTAssertTrue(token.debugDescription.contains("\"gone\""), token.debugDescription)
        context = nil
        XCTAssertTrue(token.debugDescription.contains("its context \"gone\" was released"), token.debugDescription)
        XCTAssertFalse(token.isActive)
    }

    func testSchedulerDescriptionListsWhoWaits() {
        let context = ViewUpdatingContext(label: "waiting here", scheduler: scheduler, refreshEvents: [])
        let other = ViewUpdatingContext(label: "waiting elsewhere", scheduler: scheduler, refreshEvents: [])
        XCTAssertTrue(scheduler.debugDescription.contains("no turn is asked for"), scheduler.debugDescription)
        context.setNeedsUpdate()
        onAnotherThread { other.setNeedsUpdate() }
        let text = scheduler.debugDescription
        XCTAssertTrue(text.contains("a turn is asked for"), text)
        XCTAssertTrue(text.contains("waiting: waiting here"), text)
        XCTAssertTrue(text.contains("waiting: waiting elsewhere"), text)
        XCTAssertTrue(text.contains("it has not turned yet"), text)
        scheduler.turn()
        XCTAssertTrue(scheduler.debugDescription.contains("1 turns, the last"), scheduler.debugDescription)
        XCTAssertFalse(scheduler.debugDescription.contains("waiting:"), scheduler.debugDescription)
    }

    func testDescriptionFromAnotherThreadSaysWhatItCan() {
        let context = ViewUpdatingContext(label: "seen from afar", scheduler: scheduler, refreshEvents: [])
        context.suspend()
        context.setNeedsUpdate()
        let text = NotificationCoalescing.Locked("")
        onAnotherThread { text.withLock { $0 = context.debugDescription } }
        let described = text.withLock { $0 }
        XCTAssertTrue(described.contains("update pending"), described)
        XCTAssertTrue(described.contains("suspended"), described)
        context.resume()
    }
}
