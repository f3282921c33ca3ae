import Foundation

#if canImport(AppKit) && !targetEnvironment(macCatalyst)
import AppKit
#endif

extension Notification.Name {
    /// The application is about to enter the foreground: every ``ViewUpdatingContext`` that keeps the
    /// default `refreshEvents` refreshes.
    ///
    /// On UIKit platforms this is `UIApplication.willEnterForegroundNotification` (the same name, so
    /// UIKit's own post reaches every context). Elsewhere the package defines it: on macOS the default
    /// refresh events also include AppKit's `NSApplication.willBecomeActiveNotification`, which AppKit posts
    /// itself; on Linux and watchOS nothing posts it, and a host application that wants the refresh posts it
    /// on `NotificationCenter.default`, on the main thread, when it returns to the foreground:
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// NotificationCenter.default.post(name: .applicationWillEnterForeground, object: nil)
    /// ```
    #if canImport(UIKit) && !os(watchOS)
    public static let applicationWillEnterForeground = Notification.Name(
        "UIApplicationWillEnterForegroundNotification")
    #else
    public static let applicationWillEnterForeground = Notification.Name(
        "UpdateContext.applicationWillEnterForeground")
    #endif
}

extension ViewUpdatingContext {
    /// The lifecycle events a context refreshes on unless told otherwise: the app coming back to the
    /// foreground, as the platform says it.
    ///
    /// | platform | events | posted by |
    /// | --- | --- | --- |
    /// | iOS, iPadOS, tvOS, visionOS, Mac Catalyst | `UIApplication.willEnterForegroundNotification` | UIKit |
    /// | macOS | `NSApplication.willBecomeActiveNotification`, and `.applicationWillEnterForeground` | AppKit (each time the app becomes active); the second, your code |
    /// | watchOS, Linux | `.applicationWillEnterForeground` | nothing: post it yourself, or pass `refreshEvents: []` |
    public static let defaultRefreshEvents: [Notification.Name] = {
        #if canImport(AppKit) && !targetEnvironment(macCatalyst)
        [NSApplication.willBecomeActiveNotification, .applicationWillEnterForeground]
        #else
        [.applicationWillEnterForeground]
        #endif
    }()

    /// Whether nothing on this platform posts the default refresh events (Linux, watchOS): a context that
    /// keeps them refreshes only when the host application posts them.
    static var defaultRefreshEventsArePostedByNothing: Bool {
        #if (canImport(UIKit) && !os(watchOS)) || (canImport(AppKit) && !targetEnvironment(macCatalyst))
        false
        #else
        true
        #endif
    }
}
