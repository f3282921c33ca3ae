import Foundation

extension Notification.Name {
    /// The application is about to enter the foreground: every ``ViewUpdatingContext`` refreshes.
    ///
    /// On UIKit platforms this is `UIApplication.willEnterForegroundNotification` (the same name, so
    /// UIKit's own post reaches every context). Elsewhere (macOS, Linux, watchOS) the package defines it,
    /// and the host application posts it on `NotificationCenter.default`, on the main thread, when it
    /// returns to the foreground:
    ///
    /// ```swift
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
    /// The lifecycle events a context refreshes on unless told otherwise: entering the foreground.
    public static let defaultRefreshEvents: [Notification.Name] = [.applicationWillEnterForeground]
}
