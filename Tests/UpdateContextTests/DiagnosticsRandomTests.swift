import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Random request routes — plain calls, transactions, `@NeedsUpdate` properties, other threads, `update()`
/// — with recording toggled at random, checked after every delivery against a model of what its report
/// must say: the first request it absorbed that recording noted (its file and line, or the property, and
/// its thread), how many requests it absorbed, whether it carried a transaction; and that nothing else is
/// reported (no false update loop, slow updater or missing connection). `RANDOM_SEED=…` replays a seed.
final class DiagnosticsRandomTests: XCTestCase {
    final class Probe: ViewUpdating, @unchecked Sendable {
        // @unchecked Sendable: set from another thread only in steps the main thread waits for.
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var value = 0
        /// Made from inside the next delivery (once): a request there belongs to the delivery after it.
        var inside: (() -> Void)?
        init(label: String, scheduler: ManualScheduler) {
            updateContext = ViewUpdatingContext(label: label, scheduler: scheduler, refreshEvents: [])
        }
        func updateView(animated: Bool) {
            let call = inside
            inside = nil
            call?()
        }
    }

    override func tearDown() {
        UpdateDiagnostics.isRecording = false
    }

    func testRandomRoutesAreReportedAsTheModelSays() {
        for seed in randomSeeds(fixed: [8, 13, 21, 34]) {
            run(seed: seed, steps: 600)
        }
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        UpdateDiagnostics.isRecording = false
        let recorder = ReportRecorder()
        defer {
            recorder.stop()
            UpdateDiagnostics.isRecording = false
        }
        let scheduler = ManualScheduler()
        let label = "random diagnostics \(seed)"
        let probe = Probe(label: label, scheduler: scheduler)
        onMainActor(probe) { $0.startUpdatingView() }
        XCTAssertNoThrow(try scheduler.runUntilIdle())  // its first deliveries, before recording starts
        let context = probe.updateContext
        let here = "UpdateContextTests/DiagnosticsRandomTests.swift"

        // The model.
        var recording = false
        var dirty = false
        var pendingTransaction = false
        /// Another thread's request waits in the inbox: the next main-thread request takes the slow path.
        var inbox = false
        var noted: String?  // the first noted request's site and thread, as the report must say it
        var absorbed = 0
        var carriesTransaction = false
        var deliveries = 0
        /// What the armed inside call does to the model: whether it toggles recording first.
        var armedInside: Bool?
        var log: [String] = []

        func requested(slow isSlow: Bool, site: String, transaction: Bool = false) {
            let slow = isSlow || inbox
            inbox = false
            if slow && recording && noted == nil { noted = site }
            if slow || recording { absorbed += 1 }
            dirty = true
            if transaction {
                pendingTransaction = true
                carriesTransaction = true
            }
        }

        func delivered() -> String? {
            // The report says what the delivery absorbed, as it began.
            let report =
                recording ? "\(noted ?? "-") absorbed \(absorbed) \(carriesTransaction ? "transaction" : "-")" : nil
            noted = nil
            absorbed = 0
            inbox = false
            dirty = false
            pendingTransaction = false
            carriesTransaction = false
            deliveries += 1
            if let toggles = armedInside {
                // Inside the updater: maybe recording toggled, then a request, deferred to a later cycle.
                armedInside = nil
                if toggles { recording.toggle() }
                requested(slow: true, site: "\(here):777 (main thread)")
                inbox = true
            }
            return report
        }

        var expected: [String] = []
        for step in 0..<steps {
            let before = recorder.reports(label: label, kind: .delivery).count
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<18:
                let line = #line + 1
                context.setNeedsUpdate()
                requested(slow: !dirty, site: "\(here):\(line) (main thread)")
                log.append("plain")
            case 18..<30:
                // The same plain transaction again on a dirty context is the transaction fast path.
                let line = #line + 1
                context.setNeedsUpdate(transaction: UpdateTransaction(animation: .default))
                requested(slow: !pendingTransaction, site: "\(here):\(line) (main thread)", transaction: true)
                log.append("transaction")
            case 30..<45:
                probe.value += 1
                requested(slow: !dirty, site: "@NeedsUpdate Probe.value (main thread)")
                log.append("property")
            case 45..<55:
                let line: UInt = 4_242  // given explicitly: the call is inside a closure
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    Thread.current.name = "worker"
                    context.setNeedsUpdate(line: line)
                    done.signal()
                }
                done.wait()
                requested(slow: true, site: "\(here):\(line) (worker thread)")
                inbox = true
                log.append("other thread")
            case 55..<62:
                let line = #line + 1
                context.update()
                requested(slow: true, site: "\(here):\(line) (main thread)")
                if let text = delivered() { expected.append(text) }
                log.append("update")
            case 62..<85:
                scheduler.turn()
                if dirty, let text = delivered() { expected.append(text) }
                log.append("turn")
            case 85..<90:
                guard armedInside == nil else { break }
                let toggles = Bool.random(using: &random)
                armedInside = toggles
                probe.inside = {
                    if toggles { UpdateDiagnostics.isRecording.toggle() }
                    context.setNeedsUpdate(line: 777)
                }
                log.append(toggles ? "arm inside (toggling recording)" : "arm inside")
            default:
                recording.toggle()
                UpdateDiagnostics.isRecording = recording
                log.append(recording ? "recording on" : "recording off")
            }
            let reports = recorder.reports(label: label, kind: .delivery)
            let said = reports.map { report -> String in
                // Main or another thread: not the name (a sanitizer's runtime names threads its own way).
                let site =
                    report.callSite.map { site in
                        site.line == 0
                            ? "\(site.file) (\(site.thread == "main" ? "main" : "worker") thread)"
                            : "\(site.file):\(site.line) (\(site.thread == "main" ? "main" : "worker") thread)"
                    } ?? "-"
                return
                    "\(site) absorbed \(report.absorbedRequests ?? -1) \(report.transaction == nil ? "-" : "transaction")"
            }
            if said != expected {
                XCTFail(
                    "seed \(seed) step \(step): reports \(said.suffix(3)), model \(expected.suffix(3)); "
                        + "last steps: \(log.suffix(12)) (\(before) before)")
                return
            }
            let others = recorder.reports(label: label).filter { $0.kind != .delivery }
            if !others.isEmpty {
                XCTFail("seed \(seed) step \(step): unexpected reports \(others); last steps: \(log.suffix(12))")
                return
            }
        }
        UpdateDiagnostics.isRecording = false
        _ = try? scheduler.runUntilIdle()
        XCTAssertGreaterThan(deliveries, 0)
    }
}
