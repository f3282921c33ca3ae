import CoreFoundation
import Foundation

// Darwin's CoreFoundation types run-loop modes as `CFRunLoopMode`; Linux's takes plain `CFString`s. The
// one place that knows.
#if canImport(Darwin)
/// `kCFRunLoopCommonModes`, spelled for this platform.
package var commonModesName: CFRunLoopMode { .commonModes }

/// A run-loop mode as CoreFoundation's functions take it on this platform.
package func runLoopModeName(_ mode: RunLoop.Mode) -> CFRunLoopMode {
    CFRunLoopMode(mode.rawValue as CFString)
}
#else
/// `kCFRunLoopCommonModes`, spelled for this platform.
package var commonModesName: CFString { kCFRunLoopCommonModes }

/// A run-loop mode as CoreFoundation's functions take it on this platform.
package func runLoopModeName(_ mode: RunLoop.Mode) -> CFString {
    CFStringCreateWithCString(nil, mode.rawValue, CFStringBuiltInEncodings.UTF8.rawValue)
}
#endif
