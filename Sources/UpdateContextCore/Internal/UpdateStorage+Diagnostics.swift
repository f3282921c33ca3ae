import CCoalescingSupport
import CoalescingRuntime
import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

extension UpdateStorage {
    package var diagnosticLabel: DiagnosticLabel? { label }

    // MARK: Requests (main thread unless said)

    /// A request applied on the main thread, as diagnostics count it for the delivery that absorbs it: its
    /// count, and its site when recorded and no earlier request of that delivery was.
    func noteApplied(_ note: RequestNote) {
        machine.absorbed &+= note.count
        if note.isRecorded, let site = note.site { noteFirstRequest(site) }
    }

    /// A request from inside this context's delivery: one more cycle towards the update-loop report —
    /// unless the library made it for a change made elsewhere (a tracked change's follow-up).
    func noteRequestInDelivery(_ site: RequestSite) {
        guard site.countsAsSelfRequest else { return }
        machine.diagnostics.insert(.requestedInDelivery)
        guard machine.loopCount >= DiagnosticsThresholds.loopCycles - 1,
            !machine.diagnostics.contains(.loopReported),
            !withScheduler({ $0.drivesPerFrameWork })
        else { return }
        machine.diagnostics.insert(.loopReported)
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .updateLoop, label: label.string,
                message: "requested again from inside its own delivery in \(DiagnosticsThresholds.loopCycles) "
                    + "consecutive cycles: an updater changes state that requests an update, so the context "
                    + "delivers every cycle and keeps the CPU busy. Make the updater only read state (or "
                    + "compare before assigning); for per-frame work, use a frame-paced scheduler "
                    + "(.framePaced, in NotificationCoalescing and UpdateContext).",
                callSite: site.callSite))
    }

    /// While recording: `site` is the first request of the next delivery unless one is noted already (kept by
    /// the context's link, which goes with the context). Main thread, where requests are applied.
    private func noteFirstRequest(_ site: RequestSite) {
        guard link.noteFirstRequest(site) else { return }
        machine.diagnostics.insert(.recordedSite)
    }

    /// The delivery's updaters have returned: counts the cycle towards an update loop or resets the count.
    @inline(__always)
    func noteDeliveryEnded() {
        if machine.diagnostics.remove(.requestedInDelivery) == nil {
            machine.loopCount = 0
            return
        }
        let count = machine.loopCount
        if count < DiagnosticsThresholds.loopCycles { machine.loopCount = count + 1 }
    }

    /// How many requests the delivery beginning now absorbed (main thread), given the inbox's count.
    @inline(__always)
    func takeAbsorbed() -> UInt32 {
        defer { machine.absorbed = 0 }
        return machine.absorbed
    }

    /// A delivery timed on its own took `nanoseconds` (ending at `now`), longer than a frame: names the context,
    /// unless a slow report named it in the last second.
    func noteSlowDelivery(nanoseconds: UInt64, at now: UInt64) {
        guard nameForSlowReport(at: now) != nil else { return }
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .slowUpdater, label: label.string,
                message: "a delivery outside a turn took \(UpdateDiagnostics.milliseconds(nanoseconds)) ms, longer "
                    + "than a frame (16 ms): frames are dropped while it runs. Move the slow work off the main "
                    + "thread, or out of the updater.",
                duration: Double(nanoseconds) / 1e9))
    }

    /// What a slow report calls this context, unless one named it less than a second before `now`; counts as a
    /// naming. Main thread.
    package func nameForSlowReport(at now: UInt64) -> String? {
        let milliseconds = UInt32(truncatingIfNeeded: now / 1_000_000)
        if machine.diagnostics.contains(.named),
            UInt64(milliseconds &- machine.namedAt) * 1_000_000 < UpdateDiagnostics.reportInterval
        {
            return nil
        }
        machine.diagnostics.insert(.named)
        machine.namedAt = milliseconds
        return label.string
    }

    /// While recording: the report of one delivery.
    func reportDelivery(
        _ delivery: Delivery, absorbed: UInt32, site: UpdateDiagnostics.Report.CallSite?,
        transaction: CompletionGroup?, nanoseconds: UInt64
    ) {
        let transaction = transaction.map { _ in deliveryTransaction(animated: delivery.animated) }
        let kind =
            delivery.isForced
            ? "forced"
            : delivery.isEarlyFlush
                ? "early non-animated" : delivery.isScopeFlush ? "scope-entry flush" : "end of cycle"
        let flag = delivery.animated ? "animated" : "not animated"
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .delivery, label: label.string,
                message: "\(kind) delivery #\(deliverySerial), \(flag), absorbed \(absorbed) request"
                    + (absorbed == 1 ? "" : "s") + ", updaters took \(UpdateDiagnostics.milliseconds(nanoseconds)) ms",
                callSite: site, absorbedRequests: Int(absorbed), animated: delivery.animated,
                transaction: transaction.map { "\($0)" }, duration: Double(nanoseconds) / 1e9))
    }

    // MARK: Suspension and release

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

// What a context says about itself when asked (`debugDescription`).
extension UpdateStorage {
    /// ``ViewUpdatingContext/debugDescription``. Any thread, even racing the context's release: the
    /// scheduler is retained for the whole description (everything below reads it unretained, and a token
    /// asked from another thread does not keep the context, nor so the scheduler, alive).
    var diagnosticDescription: String {
        guard !isCancelled, let scheduler = retainedScheduler() else {
            return
                "ViewUpdatingContext \"\(label.string)\"\n  released: it delivers nothing more (its updaters are gone)"
        }
        return withExtendedLifetime(scheduler) { describeWhileSchedulerHeld() }
    }

    private func describeWhileSchedulerHeld() -> String {
        var lines = ["ViewUpdatingContext \"\(label.string)\""]
        let onMain = isOnSchedulerThread
        let suspended = cvu_bits_load(flags + Self.scheduledFlag) & Published.suspended != 0
        if onMain {
            let machine = self.machine
            if isUpdatePending {
                let flag = machine.pending.flag.map { $0 ? "animated" : "not animated" } ?? "default flag"
                lines.append(
                    "update pending (\(flag)\(machine.pending.isForced ? ", forced" : "")"
                        + "\(inboxHasRequests ? ", with requests from other threads not yet applied" : ""))")
            } else {
                lines.append("no update pending")
            }
            if machine.isSuspended {
                lines.append(
                    "suspended (\(machine.suspensions) suspend() call\(machine.suspensions == 1 ? "" : "s") "
                        + "without resume()): nothing is delivered until the last resume()")
            }
            if machine.isDelivering { lines.append("delivering now (its updaters are running)") }
            if machine.pending.isScheduled && machine.parkedTurn > machine.lastTurn {
                let mode = withScheduler { $0.currentMode?.rawValue } ?? "a private mode"
                lines.append(
                    "parked: its work waits for a pass in a common run-loop mode; the last turn was in a "
                        + "private mode (the main loop is running \(mode))")
            }
        } else {
            lines.append(isUpdatePending ? "update pending" : "no update pending")
            if suspended { lines.append("suspended") }
        }
        lines.append(withScheduler(schedulerLine))
        let updaters = updaterCount
        if updaters > 0 {
            lines.append("\(updaters) updater\(updaters == 1 ? "" : "s")")
        } else {
            lines.append(
                "0 updaters: requests reach nobody (a ViewUpdating object connects its updateView(animated:) with "
                    + "startUpdatingView(); otherwise none was registered, or all were removed)")
        }
        if refreshes && ViewUpdatingContext.defaultRefreshEventsArePostedByNothing
            && RefreshHub.isMember(self, of: .applicationWillEnterForeground)
        {
            lines.append(
                "refreshes on .applicationWillEnterForeground, which nothing posts on this platform: the host "
                    + "application posts it when it returns to the foreground (or pass refreshEvents: [])")
        }
        if onMain {
            let count = machine.deliverySerial
            var line = count == 0 ? "no delivery yet" : "\(count) deliver\(count == 1 ? "y" : "ies") so far"
            let lastTurn = machine.lastTurn
            if lastTurn != 0 {
                let ago = withScheduler { $0.turnCount } &- lastTurn
                line += ago == 0 ? "; it ran in the scheduler's last turn" : "; it last ran \(ago) turns ago"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n  ")
    }

    private func schedulerLine(_ scheduler: CoalescingScheduler) -> String {
        var line = "scheduler \(type(of: scheduler)) \"\(scheduler.label)\": "
        if let seconds = scheduler.secondsSinceLastTurn {
            line += String(format: "last turned %.3f s ago", seconds)
            if scheduler.isTurnOverdue {
                line += "; a turn asked for more than a second ago has not begun. " + scheduler.stallAdvice
            }
        } else if !scheduler.hasRequestedTurn {
            // Nothing asked it to turn yet (a context that has delivered at once, or is suspended): no advice.
            line += "it has not turned yet, and no turn is asked for"
        } else if scheduler.isTurnOverdue {
            line += "it has never turned, and a turn asked for more than a second ago has not begun. "
            line += scheduler.stallAdvice
        } else {
            line += "it has not turned yet; a turn is asked for"
        }
        return line
    }
}

/// What diagnostics watch of one delivery, made where it begins: the requests it absorbed and the first
/// one's site (while recording), its signpost, and its time — for the recorded report, and for a delivery made
/// outside every turn (`update()`, a first render, a flush), which is timed on its own: slower than a frame, it
/// names its context (``UpdateDiagnostics/Report/Kind-swift.struct/slowUpdater``). A turn is timed whole by its
/// scheduler, and a delivery inside one is part of its time: no clock is read for it unless recording.
struct DeliveryProbe {
    private let absorbed: UInt32
    private let recordedSite: UpdateDiagnostics.Report.CallSite?
    private let recording: Bool
    /// Timed on its own (outside every turn and every delivery timed on its own).
    private let alone: Bool
    private let began: UInt64
    private let interval: SignpostInterval?

    /// Begins with the delivery: takes what it absorbed, and the first site recording noted for it.
    @inline(__always)
    init(_ storage: UpdateStorage) {
        absorbed = storage.takeAbsorbed()
        // The first request this delivery absorbed is claimed with its count, before any updater can request
        // again (for the next delivery) or recording can change; a delivery made while not recording just
        // forgets it (no stale site for a later one).
        let hasRecordedSite = storage.machine.diagnostics.remove(.recordedSite) != nil
        recordedSite = hasRecordedSite ? storage.linkIfMade?.takeRecordedSite() : nil
        recording = cvu_diagnostics_is_recording()
        alone = storage.withScheduler { $0.timesDeliveryAlone }
        if alone { storage.withScheduler { $0.timedDelivery(began: true) } }
        began = alone || recording ? storage.withScheduler { $0.now() } : 0
        interval = Signposts.begin(.delivery, label: storage.label.string, count: Int(absorbed))
    }

    /// The updaters have returned; `transaction`'s completions run next.
    @inline(__always)
    func end(_ storage: UpdateStorage, _ delivery: Delivery, transaction: CompletionGroup?) {
        Signposts.end(interval)
        guard alone || recording else { return }
        let now = storage.withScheduler { $0.now() }
        if alone {
            storage.withScheduler { $0.timedDelivery(began: false) }
            if now &- began > UpdateDiagnostics.frameNanoseconds {
                storage.noteSlowDelivery(nanoseconds: now &- began, at: now)
            }
        }
        if recording {
            storage.reportDelivery(
                delivery, absorbed: absorbed, site: recordedSite, transaction: transaction,
                nanoseconds: now &- began)
        }
    }
}

// What the diagnostics of a context share: its marks (kept by its state machine) and the thresholds.

/// What a context's diagnostics remember between requests and deliveries: the state machine's
/// ``UpdateStateMachine/diagnostics`` (main thread, where requests are applied and deliveries made).
struct DiagnosticsBits: OptionSet {
    let rawValue: UInt8
    /// The context was requested while its updaters ran.
    static let requestedInDelivery = DiagnosticsBits(rawValue: 1 << 0)
    /// The update loop was reported.
    static let loopReported = DiagnosticsBits(rawValue: 1 << 1)
    /// A slow report named the context (at ``UpdateStateMachine/namedAt``).
    static let named = DiagnosticsBits(rawValue: 1 << 2)
    /// Recording noted a first request for the next delivery (kept by the link).
    static let recordedSite = DiagnosticsBits(rawValue: 1 << 3)
}

/// What the always-on reports need to know.
enum DiagnosticsThresholds {
    /// Consecutive deliveries that each re-requested their own context: an update loop.
    static let loopCycles: UInt8 = 60
}
