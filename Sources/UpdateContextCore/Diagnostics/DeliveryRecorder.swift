import CCoalescingSupport
import CoalescingRuntime
import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// What diagnostics watch of one delivery: the requests it absorbed and the first one's site (while
/// recording), its signpost, and its time — for the recorded report, and for a delivery made outside every
/// turn (`update()`, a first render, a flush), which is timed on its own: slower than a frame, it names its
/// context (``UpdateDiagnostics/Report/Kind-swift.struct/slowUpdater``). A turn is timed whole by its scheduler,
/// and a delivery inside one is part of its time.
///
/// The delivery makes one only when something watches (recording, a tool recording signposts, or a delivery
/// timed on its own: see `UpdateStorage.deliver`), at its beginning, and ends it when its updaters have
/// returned: otherwise no diagnostics code runs for a delivery.
struct DeliveryRecorder {
    private let absorbed: UInt32
    private let recordedSite: UpdateDiagnostics.Report.CallSite?
    private let recording: Bool
    /// Timed on its own (outside every turn and every delivery timed on its own).
    private let alone: Bool
    private let began: UInt64
    private let interval: SignpostInterval?

    /// Begins with the delivery: takes what it absorbed, and the first site recording noted for it.
    init(_ storage: UpdateStorage) {
        let (absorbed, siteNoted) = storage.machine.takeDiagnostics()
        self.absorbed = absorbed
        recordedSite = siteNoted ? storage.takeRecordedSite() : nil
        recording = cvu_diagnostics_is_recording()
        alone = storage.withScheduler { $0.timesDeliveryAlone }
        if alone { storage.withScheduler { $0.timedDelivery(began: true) } }
        began = alone || recording ? storage.withScheduler { $0.now() } : 0
        interval = Signposts.begin(.delivery, label: storage.label.string, count: Int(absorbed))
    }

    /// The updaters have returned; the delivery's completions run next.
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

// The reports a context makes: the update loop, a slow delivery, a recorded delivery, a release with an update
// pending. Main thread unless said.
extension UpdateStorage {
    package var diagnosticLabel: DiagnosticLabel? { label }

    /// While recording: `site` is the first request of the next delivery unless one is noted already. Kept
    /// like a face (a box in the same table), so that a context pays nothing for it while not recording.
    func noteFirstRequest(_ site: RequestSite) {
        guard machine.diagnostics.bits.insert(.recordedSite).inserted else { return }
        let noted = face(RecordedSite.self) ?? adopt(RecordedSite())
        noted.site.withLock { $0 = site.callSite }
    }

    /// The first request noted for the delivery beginning now, taken.
    func takeRecordedSite() -> UpdateDiagnostics.Report.CallSite? {
        face(RecordedSite.self)?.site.withLock { site in
            defer { site = nil }
            return site
        }
    }

    /// A request from inside this context's delivery: one more cycle towards the update-loop report —
    /// unless the library made it for a change made elsewhere (a tracked change's follow-up). The report, when
    /// this cycle is the 60th in a row.
    func noteRequestInDelivery(_ site: RequestSite) {
        guard site.countsAsSelfRequest else { return }
        machine.diagnostics.bits.insert(.requestedInDelivery)
        guard machine.diagnostics.loopCount >= DiagnosticsThresholds.loopCycles - 1,
            !withScheduler({ $0.drivesPerFrameWork }), machine.diagnostics.bits.insert(.loopReported).inserted
        else { return }
        UpdateDiagnostics.emit(
            .updateLoop, label: label.string,
            message: "requested again from inside its own delivery in \(DiagnosticsThresholds.loopCycles) "
                + "consecutive cycles: an updater changes state that requests an update, so the context "
                + "delivers every cycle and keeps the CPU busy. Make the updater only read state (or "
                + "compare before assigning); for per-frame work, use a frame-paced scheduler "
                + "(.framePaced, in NotificationCoalescing and UpdateContext).",
            callSite: site.callSite)
    }

    /// A delivery timed on its own took `nanoseconds` (ending at `now`), longer than a frame: names the context,
    /// unless a slow report named it in the last second.
    func noteSlowDelivery(nanoseconds: UInt64, at now: UInt64) {
        guard nameForSlowReport(at: now) != nil else { return }
        UpdateDiagnostics.emit(
            .slowUpdater, label: label.string,
            message: "a delivery outside a turn took \(UpdateDiagnostics.milliseconds(nanoseconds)) ms, longer "
                + "than a frame (16 ms): frames are dropped while it runs. Move the slow work off the main "
                + "thread, or out of the updater.",
            duration: Double(nanoseconds) / 1e9)
    }

    /// What a slow report calls this context, unless one named it less than a second before `now`; counts as a
    /// naming. Main thread (a turn's, or a delivery's).
    package func nameForSlowReport(at now: UInt64) -> String? {
        let milliseconds = UInt32(truncatingIfNeeded: now / 1_000_000)
        if machine.diagnostics.bits.contains(.named),
            UInt64(milliseconds &- machine.diagnostics.namedAt) * 1_000_000 < UpdateDiagnostics.reportInterval
        {
            return nil
        }
        machine.diagnostics.bits.insert(.named)
        machine.diagnostics.namedAt = milliseconds
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

    /// The context is being released (any thread): reports an update that will never be delivered — and says
    /// when the context was suspended, which is most often why.
    func noteRelease() {
        guard isUpdatePending else { return }
        let suspended = cvu_bits_load(flags + Self.scheduledFlag) & Published.suspended != 0
        UpdateDiagnostics.emit(
            .releasedWithPendingUpdate, label: label.string,
            message: suspended
                ? "released while suspended, with an update pending: that update is never delivered. Look for a "
                    + "suspend() without its resume(), or call updateIfNeeded() after the last resume()."
                : "released with an update pending: that update is never delivered. If the view must show the "
                    + "last state, call updateIfNeeded() before letting the context go.")
    }

    /// A request reached the context while it is suspended (main thread: a suspended context takes no fast path,
    /// so every request comes here): suspended for more than a second, it is reported once.
    func noteRequestWhileSuspended() {
        guard !machine.diagnostics.bits.contains(.suspendReported) else { return }
        let now = UInt32(truncatingIfNeeded: withScheduler { $0.now() } / 1_000_000)
        guard UInt64(now &- machine.diagnostics.suspendedAt) * 1_000_000 > UpdateDiagnostics.reportInterval else {
            return
        }
        machine.diagnostics.bits.insert(.suspendReported)
        UpdateDiagnostics.emit(
            .unbalancedSuspend, label: label.string,
            message: "requested while suspended for more than a second: nothing is delivered until every "
                + "suspend() has its resume(). If the view is off screen on purpose, this is expected; "
                + "otherwise look for a suspend() without its resume().")
    }

    /// A `ViewUpdating` object requests through this context, and neither it connected nor a request of it was
    /// seen before (the request's slow path, main thread): seen — a view controller only once its view is loaded
    /// (a tab not selected yet, a controller made before it is pushed, connects later in `viewDidLoad`).
    func noteOwner(_ owner: AnyObject) {
        guard MainActorPlace.isCurrent else { return }
        nonisolated(unsafe) let owner = owner
        let viewsExist = MainActor.assumeIsolated { () -> Bool in
            #if canImport(UIKit) && !os(watchOS)
            if let controller = owner as? UIViewController { return controller.isViewLoaded }
            #elseif canImport(AppKit)
            if let controller = owner as? NSViewController { return controller.isViewLoaded }
            #endif
            return true
        }
        if viewsExist { machine.diagnostics.bits.insert(.ownerSeen) }
    }

    /// A delivery reached no updater (main thread): when a `ViewUpdating` object requests through the context and
    /// never called `startUpdatingView()`, its `updateView(animated:)` is never called — reported once.
    func noteDeliveredToNobody() {
        guard machine.diagnostics.bits.contains(.ownerSeen), !machine.diagnostics.bits.contains(.ownerConnected),
            machine.diagnostics.bits.insert(.nothingConnectedReported).inserted
        else { return }
        UpdateDiagnostics.emit(
            .nothingConnected, label: label.string,
            message: "its requests reach no updater: the ViewUpdating object that owns it has not called "
                + "startUpdatingView(), so updateView(animated:) is never called. Call startUpdatingView() "
                + "once the views exist (viewDidLoad, or the end of init).")
    }
}

/// While recording, the first request a context's next delivery absorbs: kept as one of the context's faces.
final class RecordedSite: Sendable {
    let site = Locked<UpdateDiagnostics.Report.CallSite?>(nil)
}

/// What a context's diagnostics remember between requests and deliveries (the state machine's
/// `diagnostics.bits`, main thread).
struct DiagnosticsBits: OptionSet {
    let rawValue: UInt8
    /// The context was requested while its updaters ran.
    static let requestedInDelivery = DiagnosticsBits(rawValue: 1 << 0)
    /// The update loop was reported.
    static let loopReported = DiagnosticsBits(rawValue: 1 << 1)
    /// A slow report named the context (at `diagnostics.namedAt`).
    static let named = DiagnosticsBits(rawValue: 1 << 2)
    /// Recording noted a first request for the next delivery (a ``RecordedSite`` face keeps it).
    static let recordedSite = DiagnosticsBits(rawValue: 1 << 3)
    /// A request on the context while it was suspended for more than a second was reported.
    static let suspendReported = DiagnosticsBits(rawValue: 1 << 4)
    /// A `ViewUpdating` object requested through the context (its views exist).
    static let ownerSeen = DiagnosticsBits(rawValue: 1 << 5)
    /// A `ViewUpdating` object connected its `updateView(animated:)` (`startUpdatingView()`), once or more.
    static let ownerConnected = DiagnosticsBits(rawValue: 1 << 6)
    /// A delivery that reached no updater of an unconnected owner was reported.
    static let nothingConnectedReported = DiagnosticsBits(rawValue: 1 << 7)
}

/// What the always-on reports need to know.
enum DiagnosticsThresholds {
    /// Consecutive deliveries that each re-requested their own context: an update loop.
    static let loopCycles: UInt8 = 60
}
