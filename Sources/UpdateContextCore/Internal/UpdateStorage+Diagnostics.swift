import CCoalescingSupport
import CoalescingRuntime
import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

extension UpdateStorage: WatchdogSubject, SlowTurnSubject {
    package var diagnosticLabel: DiagnosticLabel? { label }

    @inline(__always)
    var diagnostics: UnsafeMutablePointer<UInt8> { flags + Self.diagnosticsBits }

    // MARK: Requests (main thread unless said)

    /// A request about to be applied on the main thread: counted, and checked for an update loop when it
    /// is made from inside this context's own delivery.
    @inline(__always)
    func noteSlowPathRequest(file: StaticString, line: UInt) {
        noteSlowPathRequest(RequestSite(file: file, line: line))
    }

    func noteSlowPathRequest(_ site: RequestSite) {
        noteSlowPathRequest(lazily: { site })
    }

    /// ``noteSlowPathRequest(_:)`` with the site made only if a report or recording needs it.
    @inline(__always)
    func noteSlowPathRequest(lazily site: () -> RequestSite) {
        if cvu_diagnostics_is_recording() { noteFirstRequest(site()) }
        if machinePointer.pointee.isDelivering {
            noteRequestInDelivery(site())
        } else {
            machinePointer.pointee.absorbed &+= 1
        }
    }

    /// A request from inside this context's delivery: one more cycle towards the update-loop report —
    /// unless the library made it for a change made elsewhere (a tracked change's follow-up).
    private func noteRequestInDelivery(_ site: RequestSite) {
        guard site.countsAsSelfRequest else { return }
        let bits = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.requestedInDelivery)
        guard machinePointer.pointee.loopCount >= DiagnosticsThresholds.loopCycles - 1,
            bits & DiagnosticsBits.loopReported == 0,
            !withScheduler({ $0.drivesPerFrameWork })
        else { return }
        _ = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.loopReported)
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .updateLoop, label: label.string,
                message: "requested again from inside its own delivery in \(DiagnosticsThresholds.loopCycles) "
                    + "consecutive cycles: an updater changes state that requests an update, so the context "
                    + "delivers every cycle and keeps the CPU busy. Make the updater only read state (or "
                    + "compare before assigning), or use the .framePaced scheduler for per-frame work.",
                callSite: site.callSite))
    }

    /// While recording: `site` is the first request of the next delivery unless one is noted already (kept by
    /// the context's link, which goes with the context). Any thread.
    private func noteFirstRequest(_ site: RequestSite) {
        guard link.noteFirstRequest(site) else { return }
        withShared { $0.hasRecordedSite = true }
    }

    /// A request on any thread (a transaction's): counted and checked as its thread's path does.
    func noteRequest(_ site: RequestSite) {
        if isOnSchedulerThread {
            noteSlowPathRequest(site)
        } else {
            noteRequestElsewhere(site)
        }
    }

    /// A request from another thread, while recording.
    func noteRequestElsewhere(file: StaticString, line: UInt) {
        noteRequestElsewhere(RequestSite(file: file, line: line))
    }

    func noteRequestElsewhere(_ site: RequestSite) {
        if cvu_diagnostics_is_recording() { noteFirstRequest(site) }
    }

    /// The delivery's updaters have returned: counts the cycle towards an update loop or resets the count.
    @inline(__always)
    func noteDeliveryEnded() {
        if cvu_bits_load(diagnostics) & DiagnosticsBits.requestedInDelivery == 0 {
            machinePointer.pointee.loopCount = 0
            return
        }
        _ = cvu_bits_fetch_and(diagnostics, ~DiagnosticsBits.requestedInDelivery)
        let count = machinePointer.pointee.loopCount
        if count < DiagnosticsThresholds.loopCycles { machinePointer.pointee.loopCount = count + 1 }
    }

    /// How many requests the delivery beginning now absorbed (main thread), given the inbox's count.
    @inline(__always)
    func takeAbsorbed(posted: UInt32) -> UInt32 {
        let machine = machinePointer
        let absorbed = machine.pointee.absorbed &+ (posted &- machine.pointee.postedMark)
        machine.pointee.absorbed = 0
        machine.pointee.postedMark = posted
        return absorbed
    }

    /// Updater `index` took `nanoseconds`: reports it once per context when slower than a frame.
    func noteSlowUpdater(index: Int, nanoseconds: UInt64) {
        guard cvu_bits_fetch_or(diagnostics, DiagnosticsBits.slowReported) & DiagnosticsBits.slowReported == 0
        else { return }
        let who = "updater #\(index + 1) took"
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .slowUpdater, label: label.string,
                message: "\(who) \(Self.milliseconds(nanoseconds)) ms, longer than a frame (16 ms): frames are "
                    + "dropped while it runs. Move the slow work off the main thread, or out of the updater.",
                duration: Double(nanoseconds) / 1e9))
    }

    package func reportSlowTurn(nanoseconds: UInt64) -> Bool {
        guard updaterCount == 1 else { return false }  // which one: the next slow turn times each
        noteSlowUpdater(index: 0, nanoseconds: nanoseconds)
        return true
    }

    /// While recording: the report of one delivery.
    func reportDelivery(
        _ delivery: Delivery, absorbed: UInt32, site: UpdateDiagnostics.Report.CallSite?,
        transaction: CompletionGroup?, nanoseconds: UInt64, isScopeFlush: Bool
    ) {
        let transaction = transaction.map { _ in deliveryTransaction(animated: delivery.animated) }
        let kind =
            delivery.isForced
            ? "forced"
            : delivery.isEarlyFlush ? "early non-animated" : isScopeFlush ? "scope-entry flush" : "end of cycle"
        let flag = delivery.animated ? "animated" : "not animated"
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .delivery, label: label.string,
                message: "\(kind) delivery #\(deliverySerial), \(flag), absorbed \(absorbed) request"
                    + (absorbed == 1 ? "" : "s") + ", updaters took \(Self.milliseconds(nanoseconds)) ms",
                callSite: site, absorbedRequests: Int(absorbed), animated: delivery.animated,
                transaction: transaction.map { "\($0)" }, duration: Double(nanoseconds) / 1e9))
    }

    /// `nanoseconds` as milliseconds with three decimals, without `String(format:)` (slow on Linux).
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let microseconds = nanoseconds / 1_000
        let fraction = String(microseconds % 1_000)
        return "\(microseconds / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    // MARK: Suspension and release

    /// Publishes whether the context is suspended (main thread); suspended with an update pending, the
    /// watchdog looks at it.
    func noteSuspension() {
        if machinePointer.pointee.rules.isSuspended {
            _ = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.suspended)
            if machinePointer.pointee.rules.isScheduled || inboxHasRequests { watchWhileSuspended() }
        } else {
            _ = cvu_bits_fetch_and(diagnostics, ~DiagnosticsBits.suspended)
        }
    }

    /// An update became pending while suspended (or the context was suspended with one pending): the
    /// watchdog looks at it until it is delivered or reported. Watched only then, so that a context
    /// suspended with nothing pending (a view off screen) keeps no timer running.
    func watchWhileSuspended() {
        if cvu_bits_load(diagnostics) & DiagnosticsBits.suspendReported == 0 { Watchdog.shared.watch(self) }
    }

    package func watchdogState() -> UInt64? {
        if isCancelled { return nil }
        if isSuspendedWithUpdatePending { return 1 }
        return isUnconnectedOwner ? 2 : nil
    }

    private var isSuspendedWithUpdatePending: Bool {
        let bits = cvu_bits_load(diagnostics)
        return bits & DiagnosticsBits.suspended != 0 && bits & DiagnosticsBits.suspendReported == 0
            && isUpdatePendingSnapshot
    }

    package func watchdogReport() {
        if isSuspendedWithUpdatePending {
            reportPendingWhileSuspended()
        } else if isUnconnectedOwner {
            reportNothingConnected()
        }
    }

    // MARK: A `ViewUpdating` owner that never connected

    /// A `ViewUpdating` object requests through this context (any thread): one load, and one atomic or
    /// the first time.
    @inline(__always)
    func markViewUpdatingOwner() {
        if !isMarkedViewUpdatingOwner {
            _ = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.viewUpdatingOwner)
        }
    }

    /// ``markViewUpdatingOwner()`` for `owner` once its views exist: a view controller whose view is not
    /// loaded yet (a tab not selected, a controller prepared before it is pushed) is expected to connect
    /// later, in `viewDidLoad`, and is not reported meanwhile. Any thread (off the main thread a
    /// controller is marked by a later request).
    @inline(__always)
    func markViewUpdatingOwner(_ owner: AnyObject) {
        if !isMarkedViewUpdatingOwner && ownerViewsExist(owner) { markViewUpdatingOwner() }
    }

    var isMarkedViewUpdatingOwner: Bool {
        cvu_bits_load(diagnostics) & DiagnosticsBits.viewUpdatingOwner != 0
    }

    /// Whether a `ViewUpdating` owner requests through this context, has not called
    /// `startUpdatingView()`, and a delivery already reached no updater (not yet reported).
    var isUnconnectedOwner: Bool {
        let bits = cvu_bits_load(diagnostics)
        return bits & DiagnosticsBits.viewUpdatingOwner != 0 && bits & DiagnosticsBits.deliveredToNobody != 0
            && bits & DiagnosticsBits.nothingConnectedReported == 0 && !isOwnerConnected && updaterCount == 0
    }

    /// Whether the owner connected its `updateView(animated:)` (`startUpdatingView()`).
    var isOwnerConnected: Bool { cvu_bits_load(flags + Self.ownerConnectedFlag) & Self.ownerConnectedOnce != 0 }

    /// A delivery reached no updater (main thread). On the canonical path that means `startUpdatingView()`
    /// was not called (yet): the watchdog reports it if that is still so a second later — a view
    /// controller made ahead of its view may wait that long, so the report says when it is expected.
    @inline(never)
    func noteDeliveredToNobody() {
        let bits = cvu_bits_load(diagnostics)
        guard bits & DiagnosticsBits.viewUpdatingOwner != 0, bits & DiagnosticsBits.nothingConnectedReported == 0,
            !isOwnerConnected
        else { return }
        _ = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.deliveredToNobody)
        Watchdog.shared.watch(self)
    }

    private func reportNothingConnected() {
        let bits = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.nothingConnectedReported)
        guard bits & DiagnosticsBits.nothingConnectedReported == 0 else { return }
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .nothingConnected, label: label.string,
                message: "its requests reach no updater: the ViewUpdating object that owns it has not called "
                    + "startUpdatingView(), so updateView(animated:) is never called. Call startUpdatingView() "
                    + "once the views exist (viewDidLoad, or the end of init). If the view is not loaded yet "
                    + "on purpose, this is expected."))
    }

    private func reportPendingWhileSuspended() {
        let bits = cvu_bits_fetch_or(diagnostics, DiagnosticsBits.suspendReported)
        guard bits & DiagnosticsBits.suspendReported == 0, !isCancelled else { return }
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .unbalancedSuspend, label: label.string,
                message: "an update has been pending for more than a second while the context is suspended: "
                    + "nothing is delivered until every suspend() has its resume(). If the view is off screen "
                    + "on purpose, this is expected; otherwise look for a suspend() without its resume()."))
    }

    /// The context is being released (any thread): reports an update that will never be delivered.
    func noteRelease() {
        guard isUpdatePending else { return }
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .releasedWithPendingUpdate, label: label.string,
                message: "released with an update pending: that update is never delivered. If the view must "
                    + "show the last state, call updateIfNeeded() before letting the context go."))
    }
}
