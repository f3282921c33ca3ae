import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Random request routes — plain calls, transactions, `@NeedsUpdate` properties, other threads (among them a
/// non-animated transaction then an animated one, whose early flush splits the inbox between two deliveries),
/// requests made inside a delivery, `update()` — with recording toggled at random, checked after every
/// delivery against a model of what its report must say, counted where requests are applied: the first
/// request it absorbed that recording noted (its file and line, or the property, and its thread), how many
/// requests it absorbed, whether it carried a transaction; and that nothing else is
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

        // The model: requests are counted, and their sites noted, where they are applied on the main thread
        // (see `RequestNote`); a site is recorded when recording was on where the request was made.
        var recording = false
        var dirty = false
        /// The pending explicit flag (`nil`, `false` or `true`), as the precedence rules keep it.
        var flag: Bool?
        /// The last merged transaction was the main thread's plain `.default` one with `true` pending: the
        /// same request again takes the fast path.
        var repeatsDefault = false
        /// Requests waiting in the inbox (another thread's, or made inside a delivery), applied at the next
        /// main-thread request, `update()` or turn, in order. `flag` is a transaction's animated flag (`nil`: a
        /// plain request without a flag).
        var queued: [(site: String, recorded: Bool, transaction: Bool, flag: Bool?)] = []
        var noted: String?  // the first noted request's site and thread, as the report must say it
        var absorbed = 0
        var carriesTransaction = false
        var deliveries = 0
        /// What the armed inside call does to the model: whether it toggles recording first.
        var armedInside: Bool?
        var log: [String] = []
        var expected: [String] = []

        func note(_ site: String, recorded: Bool) {
            absorbed += 1
            if recorded && noted == nil { noted = site }
        }

        func delivered() {
            // The report says what the delivery absorbed, as it began.
            if recording {
                expected.append("\(noted ?? "-") absorbed \(absorbed) \(carriesTransaction ? "transaction" : "-")")
            }
            noted = nil
            absorbed = 0
            dirty = false
            flag = nil
            repeatsDefault = false
            carriesTransaction = false
            deliveries += 1
            if let toggles = armedInside {
                // Inside the updater: maybe recording toggled, then a request, deferred to a later cycle.
                armedInside = nil
                if toggles { recording.toggle() }
                queued.append(("\(here):777 (main thread)", recording, false, nil))
            }
        }

        /// One request applied on the main thread: a transaction's flag is whether it animates.
        func apply(site: String, recorded: Bool, transaction: Bool, flag requestFlag: Bool?) {
            if requestFlag == true && flag == false {
                delivered()  // the rules' early flush, of what came before; this request is the next delivery's
            }
            note(site, recorded: recorded)
            dirty = true
            if let requestFlag { flag = requestFlag }
            if transaction { carriesTransaction = true }
        }

        /// The inbox, applied in order (what the deliveries it makes queue waits for the next drain).
        func drain() {
            let entries = queued
            queued = []
            for entry in entries {
                apply(site: entry.site, recorded: entry.recorded, transaction: entry.transaction, flag: entry.flag)
                if entry.transaction { repeatsDefault = false }  // a merge; a plain request keeps the key
            }
        }

        /// A plain request on the main thread: the fast path when already dirty with nothing queued (counted, no
        /// site); the slow path drains the inbox first.
        func requestedOnMain(site: String) {
            if dirty && queued.isEmpty {
                absorbed += 1
                return
            }
            drain()
            apply(site: site, recorded: recording, transaction: false, flag: nil)
        }

        for step in 0..<steps {
            let before = recorder.reports(label: label, kind: .delivery).count
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<18:
                let line = #line + 1
                context.setNeedsUpdate()
                requestedOnMain(site: "\(here):\(line) (main thread)")
                log.append("plain")
            case 18..<30:
                // The same plain transaction again on a dirty context is the transaction fast path.
                let line = #line + 1
                context.setNeedsUpdate(transaction: UpdateTransaction(animation: .default))
                if repeatsDefault && queued.isEmpty && flag == true {
                    absorbed += 1
                } else {
                    drain()
                    let flushes = flag == false  // the flush's branch sets no repeat key
                    apply(site: "\(here):\(line) (main thread)", recorded: recording, transaction: true, flag: true)
                    repeatsDefault = !flushes
                }
                log.append("transaction")
            case 30..<45:
                probe.value += 1
                requestedOnMain(site: "@NeedsUpdate Probe.value (main thread)")
                log.append("property")
            case 45..<55:
                // Another thread: a plain request, or a non-animated transaction then an animated one (applied
                // in the main thread's next drain, where the animated one makes the rules' early flush).
                let line: UInt = 4_242  // given explicitly: the calls are inside a closure
                let pair = Bool.random(using: &random)
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    Thread.current.name = "worker"
                    if pair {
                        context.setNeedsUpdate(transaction: UpdateTransaction(), line: line + 1)
                        context.setNeedsUpdate(
                            transaction: UpdateTransaction(animation: .linear(duration: 0.1)), line: line + 2)
                    } else {
                        context.setNeedsUpdate(line: line)
                    }
                    done.signal()
                }
                done.wait()
                if pair {
                    queued.append(("\(here):\(line + 1) (worker thread)", recording, true, false))
                    queued.append(("\(here):\(line + 2) (worker thread)", recording, true, true))
                } else {
                    queued.append(("\(here):\(line) (worker thread)", recording, false, nil))
                }
                log.append(pair ? "other thread: F T" : "other thread")
            case 55..<62:
                let line = #line + 1
                context.update()
                drain()
                note("\(here):\(line) (main thread)", recorded: recording)
                delivered()
                log.append("update")
            case 62..<85:
                scheduler.turn()
                drain()
                if dirty { delivered() }
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
