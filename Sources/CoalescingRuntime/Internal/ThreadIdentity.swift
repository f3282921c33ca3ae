import CCoalescingSupport

/// The identity of a thread, cheap to take and compare (no Foundation call).
///
/// A serial number given to each thread on first use, never reused within the process: a `pthread_t`
/// is recycled by the C library once its thread has exited, so a scheduler created on a thread that has
/// gone would take a new thread with the same handle for its own. `Thread.isMainThread` costs about
/// 300 ns on Linux, more than everything else a coalesced request does, so hot paths use
/// ``isMainThread`` and compare serials.
package struct ThreadIdentity: Sendable, Equatable {
    private let serial: UInt64

    package static var current: ThreadIdentity {
        ThreadIdentity(serial: cvu_thread_serial())
    }

    @inline(__always)
    package var isCurrent: Bool {
        serial == cvu_thread_serial()
    }

    /// Whether the calling thread is the process's main thread (a thread-local read after the first ask).
    ///
    /// Exact even under `dispatchMain()`, where the main thread exits and main-queue blocks run on other
    /// threads: those are not the main thread.
    @inline(__always)
    package static var isMainThread: Bool {
        cvu_is_main_thread()
    }
}

/// Where main-actor code runs: the one answer to "is this the main thread?" wherever the package assumes the
/// main actor's isolation (a `ViewUpdating` object's `updateView`, a completion, a main-actor message's post).
///
/// The process's main thread, or a block of the main queue: under `dispatchMain()` — an `async` main on Linux,
/// Swift Testing there — the first thread has exited, and the main queue's blocks (main-actor jobs among
/// them) run on other threads, where `MainActor.assumeIsolated` holds.
package enum MainActorPlace {
    /// Whether the caller runs where main-actor code runs. Any thread: the main thread's thread-local check
    /// first, the main queue's marker only off it.
    @inline(__always)
    package static var isCurrent: Bool {
        ThreadIdentity.isMainThread || DispatchMainScheduler.isInMainQueueBlock
    }
}
