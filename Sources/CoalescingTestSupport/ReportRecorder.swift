import CCoalescingSupport
import Foundation
import NotificationCoalescing

/// Installs a diagnostics handler that keeps every report, until ``stop()`` puts the previous handler
/// back. Reports from other tests' contexts may arrive meanwhile (released contexts, the watchdog): ask
/// for those of one label.
///
/// While it records, the diagnostics' clock is frozen (``freezeDiagnosticsClock()``): a turn or an updater
/// takes what the test says (``advanceDiagnosticsClock(milliseconds:)``), never what a loaded machine or a
/// sanitizer made it take, so a report's numbers and its absence are the same on every run. A test of the
/// real clock calls ``thawDiagnosticsClock()`` first.
package final class ReportRecorder: Sendable {
    private let kept = Locked<[UpdateDiagnostics.Report]>([])
    private let previous: @Sendable (UpdateDiagnostics.Report) -> Void

    package init() {
        previous = UpdateDiagnostics.handler
        let kept = self.kept
        UpdateDiagnostics.handler = { report in kept.withLock { $0.append(report) } }
        freezeDiagnosticsClock()
    }

    /// Every report so far.
    package var all: [UpdateDiagnostics.Report] { kept.withLock { $0 } }

    /// The reports about `label`, optionally of one kind.
    package func reports(
        label: String, kind: UpdateDiagnostics.Report.Kind? = nil
    ) -> [UpdateDiagnostics.Report] {
        all.filter { $0.label == label && (kind == nil || $0.kind == kind) }
    }

    /// Puts the previous handler back, and the real clock.
    package func stop() {
        UpdateDiagnostics.handler = previous
        thawDiagnosticsClock()
    }
}

/// Stops the diagnostics' clock where it stands: from now on it moves only by
/// ``advanceDiagnosticsClock(milliseconds:)``.
package func freezeDiagnosticsClock() {
    cvu_clock_freeze(true)
}

/// Lets the diagnostics' clock run again (it jumps forward to the real clock, never back).
package func thawDiagnosticsClock() {
    cvu_clock_freeze(false)
}

/// What the diagnostics' clock reads now, in nanoseconds (`cvu_monotonic_now_ns`).
package func diagnosticsClockNanoseconds() -> UInt64 {
    cvu_monotonic_now_ns()
}

/// Moves the diagnostics' clock (`cvu_monotonic_now_ns`) forward: an updater "takes" that long without a
/// test sleeping.
package func advanceDiagnosticsClock(milliseconds: Int) {
    cvu_clock_advance(Int64(milliseconds) * 1_000_000)
}
