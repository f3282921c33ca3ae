import Foundation
import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The identity of a thread, cheap to take and compare (a thread-local read; no Foundation call).
///
/// `Thread.isMainThread` costs about 300 ns on Linux, more than everything else a coalesced request
/// does, so hot paths compare identities instead.
package struct ThreadIdentity: Sendable, Equatable {
    // `pthread_t` is a pointer on Darwin and an integer on Linux; both fit a bit pattern, never 0.
    fileprivate let bits: UInt

    package static var current: ThreadIdentity {
        #if canImport(Darwin)
        ThreadIdentity(bits: UInt(bitPattern: pthread_self()))
        #else
        ThreadIdentity(bits: UInt(pthread_self()))
        #endif
    }

    @inline(__always)
    package var isCurrent: Bool {
        ThreadIdentity.current.bits == bits
    }

    /// Whether the calling thread is the main thread; `Thread.isMainThread` is asked only until the
    /// main thread has been seen once.
    ///
    /// The main thread never exits while a run loop on it matters (under `dispatchMain()` it does
    /// exit, and its identity could be reused; nothing that runs on the main *run loop* works there).
    @inline(__always)
    package static var isMainThread: Bool {
        let known = mainThreadBits.load(ordering: .relaxed)
        if known != 0 { return known == current.bits }
        return slowIsMainThread()
    }

    @inline(never)
    private static func slowIsMainThread() -> Bool {
        guard Thread.isMainThread else { return false }
        mainThreadBits.store(current.bits, ordering: .relaxed)
        return true
    }
}

private let mainThreadBits = Atomic<UInt>(0)
