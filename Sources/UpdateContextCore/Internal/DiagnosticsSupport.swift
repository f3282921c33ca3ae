import CCoalescingSupport
import CoalescingRuntime
import Foundation

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
