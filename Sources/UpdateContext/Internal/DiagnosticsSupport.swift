import CCoalescingSupport
import Foundation
import NotificationCoalescing

// What the diagnostics of a context share: the bits of its diagnostics byte, the thresholds, the ledger of
// first requests while recording, and whether an owner's views exist.

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// Whether `owner`'s views exist: `false` for a view controller whose view is not loaded yet (or when that
/// cannot be asked: off the main thread), `true` for anything else.
func ownerViewsExist(_ owner: AnyObject) -> Bool {
    #if canImport(UIKit) && !os(watchOS)
    if let controller = owner as? UIViewController {
        // A main-actor class (so `Sendable`): asked on the main thread only, where `assumeIsolated` runs in place.
        guard MainActorPlace.isCurrent else { return false }
        return MainActor.assumeIsolated { controller.isViewLoaded }
    }
    #elseif canImport(AppKit)
    if let controller = owner as? NSViewController {
        guard MainActorPlace.isCurrent else { return false }
        return MainActor.assumeIsolated { controller.isViewLoaded }
    }
    #endif
    return true
}

/// The bits of a context's diagnostics byte (flag 7 of its storage), changed with `cvu_bits_*`.
enum DiagnosticsBits {
    /// The context was requested on the main thread while its updaters ran (main thread).
    static let requestedInDelivery: UInt8 = 1 << 0
    /// The update loop was reported.
    static let loopReported: UInt8 = 1 << 1
    /// A slow updater was reported.
    static let slowReported: UInt8 = 1 << 2
    /// The context is suspended (published by the main thread for the watchdog).
    static let suspended: UInt8 = 1 << 3
    /// Pending while suspended for more than a second was reported.
    static let suspendReported: UInt8 = 1 << 4
    /// A `ViewUpdating` object requests through this context (`@NeedsUpdate`, its `setNeedsUpdate`).
    static let viewUpdatingOwner: UInt8 = 1 << 5
    /// A delivery reached no updater while that owner had not called `startUpdatingView()`.
    static let deliveredToNobody: UInt8 = 1 << 6
    /// That was reported.
    static let nothingConnectedReported: UInt8 = 1 << 7
}

/// What the always-on reports need to know.
enum DiagnosticsThresholds {
    /// Consecutive deliveries that each re-requested their own context: an update loop.
    static let loopCycles: UInt8 = 60
}

/// The first request of each pending delivery, while recording: its call site and thread. Entries exist
/// only while recording (and until the delivery, or the context's release, takes them).
enum RecordingLedger {
    private static let firstRequests = Locked<[ObjectIdentifier: UpdateDiagnostics.Report.CallSite]>([:])

    static func noteFirstRequest(of storage: UpdateStorage, site: RequestSite) {
        let id = ObjectIdentifier(storage)
        // The call site (with the thread's name) is made outside the lock, and only for the first request.
        if firstRequests.withLock({ $0[id] != nil }) { return }
        let callSite = site.callSite
        cvu_recording_ledger_mark_used()
        firstRequests.withLock { if $0[id] == nil { $0[id] = callSite } }
        // After the entry: a delivery that sees the flag finds the entry. A context released meanwhile (on
        // another thread: a link's request races the release) forgets it here; its release forgets it after
        // marking the context gone, when the flag was set first (`forgetAfterRelease(_:)`).
        let gone = storage.withShared { shared -> Bool in
            if storage.isCancelled { return true }
            shared.hasRecordedSite = true
            return false
        }
        if gone { forget(storage) }
    }

    /// The context is gone (marked so, under its lock): forgets what recording noted for it. A request racing
    /// the release either set the flag before (forgotten here) or sees the context gone (and forgets it).
    static func forgetAfterRelease(_ storage: UpdateStorage) {
        if cvu_recording_ledger_is_used(), storage.withShared({ $0.hasRecordedSite }) { forget(storage) }
    }

    /// Forgets what `storage` had noted: a delivery made while not recording, or the context's release
    /// (no stale first request for a later recorded delivery, and no entry left for a context that went).
    static func forget(_ storage: UpdateStorage) {
        firstRequests.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(storage)) }
    }

    /// How many contexts have a first request noted (tests).
    static var count: Int { firstRequests.withLock { $0.count } }

    static func take(for storage: UpdateStorage) -> UpdateDiagnostics.Report.CallSite? {
        firstRequests.withLock { $0.removeValue(forKey: ObjectIdentifier(storage)) }
    }
}
