import CCoalescingSupport
import CoalescingRuntime
import Foundation

// What the diagnostics of a context share: the bits of its diagnostics byte and the thresholds.

/// The bits of a context's diagnostics byte (flag 7 of its storage), changed with `cvu_bits_*`.
enum DiagnosticsBits {
    /// The context was requested on the main thread while its updaters ran (main thread).
    static let requestedInDelivery: UInt8 = 1 << 0
    /// The update loop was reported.
    static let loopReported: UInt8 = 1 << 1
    /// A slow updater was reported.
    static let slowReported: UInt8 = 1 << 2
    /// The context is suspended (published by the main thread for descriptions read elsewhere).
    static let suspended: UInt8 = 1 << 3
    /// Recording noted a first request for the next delivery (kept by the link). Main thread, where requests
    /// are applied and deliveries made.
    static let recordedSite: UInt8 = 1 << 4
}

/// What the always-on reports need to know.
enum DiagnosticsThresholds {
    /// Consecutive deliveries that each re-requested their own context: an update loop.
    static let loopCycles: UInt8 = 60
}
