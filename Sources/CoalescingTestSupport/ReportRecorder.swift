import Foundation
import NotificationCoalescing

/// Installs a diagnostics handler that keeps every report, until ``stop()`` puts the previous handler
/// back. Reports from other tests' contexts may arrive meanwhile (released contexts): ask
/// for those of one label. (A `ManualScheduler`'s diagnostics clock moves only when the test says so, with
/// `advanceClock(by:)`: a report's numbers, and its absence, are the same on every run.)
package final class ReportRecorder: Sendable {
    private let kept = Locked<[UpdateDiagnostics.Report]>([])
    private let previous: @Sendable (UpdateDiagnostics.Report) -> Void

    package init() {
        previous = UpdateDiagnostics.handler
        let kept = self.kept
        UpdateDiagnostics.handler = { report in kept.withLock { $0.append(report) } }
    }

    /// Every report so far.
    package var all: [UpdateDiagnostics.Report] { kept.withLock { $0 } }

    /// The reports about `label`, optionally of one kind.
    package func reports(
        label: String, kind: UpdateDiagnostics.Report.Kind? = nil
    ) -> [UpdateDiagnostics.Report] {
        all.filter { $0.label == label && (kind == nil || $0.kind == kind) }
    }

    /// Puts the previous handler back.
    package func stop() {
        UpdateDiagnostics.handler = previous
    }
}

extension ManualScheduler {
    /// `advanceClock(by:)` in milliseconds: an updater "takes" that long without the test sleeping.
    package func advanceClock(milliseconds: Int) {
        advanceClock(by: Double(milliseconds) / 1_000)
    }
}
