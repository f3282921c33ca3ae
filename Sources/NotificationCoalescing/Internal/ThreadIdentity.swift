import CCoalescingSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("ThreadIdentity: unknown C library; add its pthread module")
#endif

/// The identity of a thread, cheap to take and compare (no Foundation call).
///
/// `Thread.isMainThread` costs about 300 ns on Linux, more than everything else a coalesced request
/// does, so hot paths use ``isMainThread`` and compare identities with `pthread_equal`, which is what
/// POSIX promises to work for `pthread_t` on every C library (a pointer on Darwin and Musl, an integer
/// on Glibc).
package struct ThreadIdentity: @unchecked Sendable {
    // @unchecked Sendable: a `pthread_t` is an immutable handle (a pointer on Darwin and Musl) that is
    // only compared, with `pthread_equal`, never dereferenced.
    private let thread: pthread_t

    package static var current: ThreadIdentity {
        ThreadIdentity(thread: pthread_self())
    }

    @inline(__always)
    package var isCurrent: Bool {
        pthread_equal(thread, pthread_self()) != 0
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
