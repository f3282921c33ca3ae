import CCoalescingSupport
import CoalescingRuntime

/// What entering a `withUpdateTransaction` scope that animates or carries a completion does first, as UIKit
/// 26's `.flushUpdates` animation option does: every context whose scheduler turns on the calling thread
/// (waiting for the next turn, or parked for a private run-loop mode) delivers what is pending now, each as
/// its end of cycle would (a non-animated update without animation), so that the scope's changes
/// are shown by deliveries of their own — animated, carrying the scope's transaction — and a change to an
/// `@Observable` value that a tracked updater read is reported in the scope (Observation reports once per
/// tracking: an earlier change of the cycle would have spent it).
///
/// Not while the thread's run loop runs a private mode (a mode of the app's own): view updates never run there;
/// they wait for a common pass, and so does what the scope changes.
///
/// The schedulers are the calling thread's (``ThreadSchedulers``, no process-wide registry, and `.dispatchMain`
/// in a main-queue block); their own lists say which contexts wait for a turn. Nothing pending costs a look
/// at each of the thread's schedulers.
enum AnimatedScopeFlush {
    /// Delivers what is pending on the calling thread's schedulers (called as an animating scope begins).
    static func flushPendingUpdates() {
        let due = ThreadSchedulers.schedulersOfCurrentThread.filter {
            $0.mayHaveWaitingClients && !$0.isInPrivateMode
        }
        guard !due.isEmpty else { return }
        // Each context once (a list may hold one several times: asked from this thread and from others), from
        // the lists as they are now: what a delivery of the flush asks again waits for the next turn.
        var seen = Set<ObjectIdentifier>()
        for scheduler in due {
            for case let storage as UpdateStorage in scheduler.waitingClients()
            where seen.insert(ObjectIdentifier(storage)).inserted {
                storage.flushBeforeAnimatedScope()
            }
        }
    }
}

extension UpdateStorage {
    /// An animating scope begins on this context's thread: what is pending is delivered now (not while
    /// suspended, nor while this context's updaters run: what they asked waits for a later cycle).
    func flushBeforeAnimatedScope() {
        guard !isCancelled, isOnSchedulerThread, !machinePointer.pointee.isDelivering else { return }
        drainInboxIfNeeded()
        perform(machinePointer.pointee.updateIfNeeded(defaultAnimated: animated, isScopeFlush: true))
    }
}
