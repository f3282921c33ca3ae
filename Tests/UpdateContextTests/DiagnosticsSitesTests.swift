import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Observation
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Diagnostics name the user's code: a `@NeedsUpdate` property names itself (its setter cannot see its
/// caller's line), every request API counts and names its call site (transactions, `modify`, sequences),
/// loops through any of them are reported, and what the library does for a change made elsewhere, or the
/// time a completion takes, is never blamed on the user's updater.
final class DiagnosticsSitesTests: XCTestCase {
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

    /// A view whose render writes its own `@NeedsUpdate` property: the canonical update loop.
    final class Ticker: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var tick = 0
        init(scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: "ticker", scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) { tick += 1 }  // the mistake
    }

    func testAnUpdateLoopThroughANeedsUpdatePropertyNamesTheProperty() {
        let ticker = Ticker(scheduler: scheduler)
        onMainActor(ticker) { $0.startUpdatingView() }
        for _ in 0..<62 { scheduler.turn() }
        let reports = recorder.reports(label: "ticker", kind: .updateLoop)
        XCTAssertEqual(reports.count, 1)
        let site = reports.first?.callSite
        XCTAssertTrue(site?.file.contains("Ticker.tick") == true, "\(String(describing: site))")
        XCTAssertFalse(site?.file.contains("ViewUpdating.swift") == true, "not the library's line")
        XCTAssertEqual(site?.line, 0)
        XCTAssertTrue(reports.first?.description.contains("Ticker.tick (main thread)") == true, "\(reports)")
    }

    func testRecordingNamesTheNeedsUpdateProperty() {
        let ticker = Ticker(scheduler: scheduler)
        ticker.updateContext.onUpdate { _ in }
        UpdateDiagnostics.isRecording = true
        ticker.tick = 5
        scheduler.turn()
        let report = recorder.reports(label: "ticker", kind: .delivery).last
        XCTAssertTrue(report?.callSite?.file.contains("Ticker.tick") == true, "\(String(describing: report))")
        XCTAssertEqual(report?.absorbedRequests, 1)
    }

    /// An updater that re-requests with a transaction loops forever: it is reported, naming its line.
    func testAnUpdateLoopThroughTransactionRequestsIsReported() {
        let context = ViewUpdatingContext(label: "transaction loop", scheduler: scheduler, refreshEvents: [])
        let line: UInt = #line + 1
        context.onUpdate { _ in context.setNeedsUpdate(transaction: UpdateTransaction(animation: .default)) }
        context.setNeedsUpdate()
        for _ in 0..<62 { scheduler.turn() }
        let reports = recorder.reports(label: "transaction loop", kind: .updateLoop)
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.first?.callSite?.file, "UpdateContextTests/DiagnosticsSitesTests.swift")
        XCTAssertEqual(reports.first?.callSite?.line, line)
    }

    /// Requests with a transaction are counted and named while recording (they said "absorbed 0 requests").
    /// Requests from another thread are reported by the delivery that applied them: another thread's `F`
    /// then `T` make the early non-animated flush (it absorbed `F`) and the end of the cycle (it absorbed `T`,
    /// its first request, made on that thread).
    func testAnEarlyFlushOfAnotherThreadsRequestsReportsWhatEachDeliveryAbsorbed() {
        let context = ViewUpdatingContext(label: "split", scheduler: scheduler, refreshEvents: [])
        var shown: [Bool] = []
        context.onUpdate { shown.append($0) }
        UpdateDiagnostics.isRecording = true
        let lineF = UInt(#line + 2)
        onAnotherThread {
            context.setNeedsUpdate(transaction: UpdateTransaction())
            context.setNeedsUpdate(transaction: UpdateTransaction(animation: .linear(duration: 0.1)))
            context.setNeedsUpdate(animated: false)
            context.setNeedsUpdate(animated: true)
        }
        scheduler.turn()
        XCTAssertEqual(shown, [false, false, true], "F, then T flushes F; F again, then T flushes it; T at the end")
        let reports = recorder.reports(label: "split", kind: .delivery)
        XCTAssertEqual(reports.map(\.absorbedRequests), [1, 2, 1], "\(reports)")
        XCTAssertEqual(reports.map { $0.callSite?.line }, [lineF, lineF + 1, lineF + 3], "\(reports)")
        XCTAssertNotEqual(reports.first?.callSite?.thread, "main", "made on the other thread")
    }

    /// A request that makes the early flush is the first request of the delivery after the flush, even when
    /// an updater of the flush requests again (that request is the flush's own, for a later delivery).
    func testARequestThatFlushesEarlyIsTheFirstRequestOfTheNextDelivery() {
        for withTransaction in [false, true] {
            let label = "flushing \(withTransaction)"
            let context = ViewUpdatingContext(label: label, scheduler: scheduler, refreshEvents: [])
            var calls = 0
            context.onUpdate { _ in
                calls += 1
                if calls == 1 { context.setNeedsUpdate(line: 7_777) }  // inside the early flush
            }
            UpdateDiagnostics.isRecording = true
            context.setNeedsUpdate(animated: false)
            let lineT: UInt
            if withTransaction {
                lineT = #line + 1
                context.setNeedsUpdate(transaction: UpdateTransaction(animation: .linear(duration: 0.1)))
            } else {
                lineT = #line + 1
                context.setNeedsUpdate(animated: true)
            }
            scheduler.turn()
            scheduler.turn()
            let reports = recorder.reports(label: label, kind: .delivery)
            XCTAssertEqual(reports.count, 2, "\(reports)")
            XCTAssertEqual(reports.last?.callSite?.line, lineT, "transaction \(withTransaction): \(reports)")
            XCTAssertEqual(reports.last?.absorbedRequests, 2, "T and the request made inside the flush")
            UpdateDiagnostics.isRecording = false
        }
    }

    func testRecordingCountsAndNamesTransactionRequests() {
        let context = ViewUpdatingContext(label: "recorded", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        UpdateDiagnostics.isRecording = true
        let line: UInt = #line + 1
        context.setNeedsUpdate(transaction: UpdateTransaction(animation: .default))
        context.setNeedsUpdate(transaction: UpdateTransaction(animation: .default))
        scheduler.turn()
        let state = StateUpdatingContext(label: "state", state: 0, scheduler: scheduler, refreshEvents: [])
        scheduler.turn()
        let modifyLine: UInt = #line + 1
        state.modify(transaction: UpdateTransaction(animation: .default)) { $0 = 1 }
        scheduler.turn()
        let report = recorder.reports(label: "recorded", kind: .delivery).last
        XCTAssertEqual(report?.absorbedRequests, 2)
        XCTAssertEqual(report?.callSite?.line, line)
        XCTAssertTrue(report?.description.contains("with UpdateTransaction(animation: default") == true, "\(report!)")
        let stateReport = recorder.reports(label: "state", kind: .delivery).last
        XCTAssertEqual(stateReport?.callSite?.line, modifyLine)
    }

    /// A sequence's requests name where the subscription was made.
    func testASequencesRequestsNameTheSubscriptionsCreationSite() {
        let context = ViewUpdatingContext(label: "sequence", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        UpdateDiagnostics.isRecording = true
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let line: UInt = #line + 1
        let subscription = context.requestUpdates(from: stream)
        continuation.yield(1)
        spinMainLoop { context.isUpdatePending }
        scheduler.turn()
        let report = recorder.reports(label: "sequence", kind: .delivery).last
        XCTAssertEqual(report?.callSite?.line, line)
        XCTAssertEqual(report?.callSite?.file, "UpdateContextTests/DiagnosticsSitesTests.swift")
        subscription.cancel()
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Observable final class Level: @unchecked Sendable {
        // @unchecked Sendable: the test changes it on one other thread at a time, waiting for each change.
        var value = 0
    }

    /// A tracked updater that only reads a model another thread changes every cycle is not an update loop:
    /// the library's follow-up request for such a change is not the context requesting itself.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func testATrackedChangeMadeElsewhereEveryCycleIsNotAnUpdateLoop() {
        let level = Level()
        let context = ViewUpdatingContext(label: "tracked", scheduler: scheduler, refreshEvents: [])
        var reads = 0
        context.onTrackedUpdate { _ in reads += level.value }
        scheduler.turn()
        for value in 1...80 {
            onAnotherThread { level.value = value }
            scheduler.turn()
        }
        _ = try? scheduler.runUntilIdle()
        XCTAssertTrue(recorder.reports(label: "tracked", kind: .updateLoop).isEmpty, "\(recorder.all)")
        XCTAssertGreaterThan(reads, 0)
    }

    /// A completion's time is not a delivery's: after `update()` (outside a turn) a slow completion names
    /// nobody; in a turn it is the turn's time, which the slow-turn report gives, blaming no updater.
    func testACompletionsTimeIsNotADeliverysTime() {
        let clock: ManualScheduler = scheduler
        let context = ViewUpdatingContext(label: "slow completion", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        func slowCompletion() -> UpdateTransaction {
            var transaction = UpdateTransaction()
            transaction.addCompletion { _ in clock.advanceClock(milliseconds: 40) }
            return transaction
        }
        context.update(transaction: slowCompletion())
        XCTAssertTrue(recorder.reports(label: "slow completion").isEmpty, "\(recorder.all)")
        context.setNeedsUpdate(transaction: slowCompletion())
        scheduler.turn()
        XCTAssertTrue(recorder.reports(label: "slow completion", kind: .slowUpdater).isEmpty, "\(recorder.all)")
        XCTAssertEqual(recorder.reports(label: scheduler.label, kind: .slowTurn).count, 1, "\(recorder.all)")
    }

    /// Recording turned off and on: a delivery never names a request noted before, long delivered; and a
    /// context released with a noted request leaves nothing in the ledger.
    func testRecordingForgetsUnrecordedDeliveriesAndReleases() {
        let context = ViewUpdatingContext(label: "toggled", scheduler: scheduler, refreshEvents: [])
        context.onUpdate { _ in }
        UpdateDiagnostics.isRecording = true
        context.setNeedsUpdate()  // noted
        UpdateDiagnostics.isRecording = false
        scheduler.turn()  // delivered, not recorded
        UpdateDiagnostics.isRecording = true
        let line: UInt = #line + 1
        context.update()
        let report = recorder.reports(label: "toggled", kind: .delivery).last
        XCTAssertEqual(report?.callSite?.line, line, "the request of this delivery, not the old one")

        let kept = ViewUpdatingContext(label: "kept", scheduler: scheduler, refreshEvents: [])
        kept.setNeedsUpdate()
        XCTAssertNotNil(kept.storage.face(RecordedSite.self)?.site.withLock { $0 }, "noted while recording")
        var released: ViewUpdatingContext? = ViewUpdatingContext(
            label: "released", scheduler: scheduler, refreshEvents: [])
        let link = released!.storage
        released?.setNeedsUpdate()
        released = nil
        XCTAssertNil(link.face(RecordedSite.self), "forgotten with the context")
        scheduler.turn()
    }
}
