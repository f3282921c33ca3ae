import CCoalescingSupport
import Foundation

/// Which thread a scheduler's turns run on, told without a call on the hot path, and the built-in
/// schedulers by their short names.
extension CoalescingScheduler {
    /// Which thread a shipped scheduler's turns run on, so that the hot path can tell without a call.
    package enum TurnThread {
        /// The thread that created it (``isCurrent`` is not overridden).
        case creator
        /// The process's main thread, exactly.
        case main
        /// The main thread, and others that ``isCurrent`` knows of (the main queue under `dispatchMain()`).
        case mainAndOthers
        /// Unknown: ask ``isCurrent`` (a user's subclass, which may override it).
        case unknown
    }

    static func threadTest(_ thread: TurnThread) -> (UInt64, UInt64, Bool) {
        switch thread {
        case .creator: (~0, cvu_thread_identity(), true)
        case .main: (1, 1, true)
        case .mainAndOthers: (1, 1, false)
        case .unknown: (0, 1, false)
        }
    }

    /// ``isCurrent`` for the hot path: a thread-local read and a compare for the shipped schedulers, a
    /// call of ``isCurrent`` for a subclass (which may override it). Any thread.
    @inlinable @inline(__always)
    package final var isCurrentFast: Bool {
        if cvu_thread_identity() & threadMask == threadExpected { return true }
        return !threadTestIsExact && isCurrent
    }
}

// The built-in schedulers have one spelling each, usable wherever a scheduler is expected
// (`scheduler: .mainRunLoop`) and typed as what they are (`CoalescingScheduler.mainRunLoop.prepare(modes:)`).
extension CoalescingScheduler {
    /// The main thread's run loop: the default for apps and XCTest. Ends a cycle at the end of each pass
    /// of the main run loop in a mode it turns in.
    public static var mainRunLoop: RunLoopScheduler { RunLoopScheduler.mainScheduler }

    /// The calling thread's run loop (one scheduler per thread, created on first use and kept in the
    /// thread's dictionary, so it goes with the thread once no context uses it). On the main thread it is
    /// ``mainRunLoop``.
    public static var currentRunLoop: RunLoopScheduler { RunLoopScheduler.currentScheduler }

    /// `DispatchQueue.main`, for `dispatchMain()` and `async` main programs (and Swift Testing on Linux).
    public static var dispatchMain: DispatchMainScheduler { DispatchMainScheduler.sharedScheduler }
}
