import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: what diagnostics cost: a dirty request and a whole cycle, recording off and on

    mutating func diagnosticsCost() {
        progress("diagnostics: recording off and on")
        let m = config.dirtyRequests / 10
        let context = ViewUpdatingContext(label: "bench", animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let counter = MainCounter()
        context.onUpdate { _ in counter.value += 1 }
        func dirtyRequests() -> Double {
            medianRepeatedRequests(config.repetitions, count: m) { context.setNeedsUpdate() }
        }
        // A whole cycle of one context: request, turn, delivery (a scheduler turned by hand, so that the
        // run loop's own cost does not hide the report's).
        let manual = ManualScheduler(label: "bench cycles")
        let cycling = ViewUpdatingContext(label: "bench cycle", scheduler: manual, refreshEvents: [])
        cycling.onUpdate { _ in counter.value += 1 }
        let cycles = max(config.dirtyRequests / 100, 1_000)
        func cycle() -> Double {
            median(config.repetitions) {
                let ns = timed {
                    for _ in 0..<cycles {
                        cycling.setNeedsUpdate()
                        manual.turn()
                    }
                }
                return (ns, cycles)
            }
        }
        let previous = UpdateDiagnostics.handler
        let reports = MainCounter()
        UpdateDiagnostics.handler = { report in
            if report.kind == .delivery { MainActor.assumeIsolated { reports.value += 1 } }
        }
        let requestOff = dirtyRequests()
        let cycleOff = cycle()
        UpdateDiagnostics.isRecording = true
        let requestOn = dirtyRequests()
        let cycleOn = cycle()
        UpdateDiagnostics.isRecording = false
        UpdateDiagnostics.handler = previous
        let delivered = counter.value
        report.rows.append(
            Row(
                scenario: "request on a dirty context, recording on", n: m, unit: "ns", ours: requestOn,
                oursDeliveries: "\(delivered) deliveries",
                note: String(
                    format: "recording off: %.1f ns (a request counts itself either way)", requestOff)))
        report.rows.append(
            Row(
                scenario: "one cycle (request, turn, delivery), recording on", n: cycles, unit: "ns", ours: cycleOn,
                oursDeliveries: "\(reports.value) reports",
                note: String(
                    format: "recording off: %.0f ns; on: %.1f× (a report made and handed to a no-op handler)",
                    cycleOff, cycleOn / cycleOff)))
        report.checks.append(
            Check(
                name: "diagnostics: one delivery report per recorded delivery",
                passed: reports.value == config.repetitions * cycles + config.repetitions,
                detail: "\(reports.value) reports for \(config.repetitions * cycles) recorded cycles and "
                    + "\(config.repetitions) recorded dirty-request cycles"))
        withExtendedLifetime(context) {}
    }
}
