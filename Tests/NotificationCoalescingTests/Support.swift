import CoreFoundation
import Foundation
import NotificationCoalescing
import XCTest

extension Notification.Name {
    static let a = Notification.Name("test.a")
    static let b = Notification.Name("test.b")
    static let c = Notification.Name("test.c")
    static let d = Notification.Name("test.d")
}

/// A pure-Swift class (no NSObject), used as a sender.
final class SwiftSender {}

/// Records what a context posts, in order, with the thread it was posted on.
final class Recorder: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var _posts: [Notification] = []
    private var _offMain = 0

    func record(_ note: Notification) {
        lock.lock()
        defer { lock.unlock() }
        _posts.append(note)
        if !Thread.isMainThread { _offMain += 1 }
    }

    var posts: [Notification] {
        lock.lock()
        defer { lock.unlock() }
        return _posts
    }

    var names: [String] { posts.map(\.name.rawValue) }
    var count: Int { posts.count }
    var offMainCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return _offMain
    }

    /// Observes every name in `names` on `context`.
    func observe(_ context: NotificationCoalescingContext, _ names: [Notification.Name] = [.a, .b, .c, .d]) {
        for name in names {
            context.observe(name) { [self] _, note in record(note) }
        }
    }
}

/// Runs the current thread's run loop in `mode` until `condition` holds or `timeout` passes.
func spinRunLoop(
    mode: RunLoop.Mode = .default,
    timeout: TimeInterval = 5,
    until condition: () -> Bool
) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() && Date() < deadline {
        _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.01))
    }
}

/// Lets the current thread's run loop turn `count` times in `mode`.
func turnRunLoop(_ count: Int = 3, mode: RunLoop.Mode = .default) {
    for _ in 0..<count {
        _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.005))
    }
}

/// A CoreFoundation string (Linux's CF functions take `CFString`; `as CFString` bridging is Darwin's).
func cfString(_ string: String) -> CFString {
    #if canImport(Darwin)
    string as CFString
    #else
    CFStringCreateWithCString(nil, string, CFStringBuiltInEncodings.UTF8.rawValue)
    #endif
}
