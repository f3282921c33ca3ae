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
