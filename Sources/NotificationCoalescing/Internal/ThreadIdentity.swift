#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The identity of a thread, cheap to take and compare (a thread-local read; no Foundation call).
package struct ThreadIdentity: Sendable {
    // `pthread_t` is a pointer on Darwin and an integer on Linux; both fit a bit pattern.
    private let bits: UInt

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
}
