import CoreFoundation
import Foundation

/// A run-loop mode as CoreFoundation's functions take it (`CFRunLoopMode` on Darwin, `CFString` on Linux).
package func cfRunLoopMode(_ name: String) -> CFRunLoopMode {
    #if canImport(Darwin)
    CFRunLoopMode(rawValue: name as CFString)
    #else
    CFStringCreateWithCString(nil, name, CFStringBuiltInEncodings.UTF8.rawValue)
    #endif
}

/// Adds `observer` to the main run loop's common modes.
package func addToMainCommonModes(_ observer: CFRunLoopObserver) {
    #if canImport(Darwin)
    CFRunLoopAddObserver(CFRunLoopGetMain(), observer, .commonModes)
    #else
    CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
    #endif
}

/// Runs the current thread's run loop in `mode` until something stops it (`CFRunLoopStop`): `true`; or
/// until `seconds` pass with the loop asleep and nothing to wake it: `false`. A liveness probe: the code
/// that receives the work stops the loop, so a `false` means the thread slept with the work pending (an
/// event, not a duration: the deadline only bounds the failure).
package func runUntilStopped(mode: RunLoop.Mode = .default, seconds: Double = 10) -> Bool {
    CFRunLoopRunInMode(cfRunLoopMode(mode.rawValue), seconds, false) == .stopped
}

/// A modal wait: runs the current thread's run loop in `mode` once, for up to `seconds`, with a one-shot
/// timer in that mode so that the loop does not count as empty (a mode holding only observers returns at
/// once). What an updater or an observer does to wait synchronously in a mode of its own.
package func runNestedLoop(mode: RunLoop.Mode, seconds: Double = 0.01) {
    let timer = Timer(timeInterval: seconds / 5, repeats: false) { _ in }
    RunLoop.current.add(timer, forMode: mode)
    _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: seconds))
    timer.invalidate()
}

/// A before-waiting observer on the main run loop's common modes at `order`: 2 000 000 stands for Core
/// Animation's commit (after the scheduler's), `CFIndex.max` for the last observer of a pass.
package final class MainLoopObserver {
    private var observer: CFRunLoopObserver?

    /// - Parameter once: Run `action` only at the first pass.
    package init(order: CFIndex, once: Bool, _ action: @escaping () -> Void) {
        var fired = false
        let observer = CFRunLoopObserverCreateWithHandler(
            kCFAllocatorDefault, CFRunLoopActivity.beforeWaiting.rawValue, true, order
        ) { _, _ in
            if once && fired { return }
            fired = true
            action()
        }
        addToMainCommonModes(observer!)
        self.observer = observer
    }

    package func invalidate() {
        if let observer { CFRunLoopObserverInvalidate(observer) }
        observer = nil
    }

    deinit {
        invalidate()
    }
}
