import Foundation
import UpdateContext

// UIKit views exist on iOS, tvOS and visionOS (watchOS has UIKit but no UIView); AppKit views on macOS.
#if canImport(UIKit) && !os(watchOS)
import UIKit

/// The view type of this platform: `UIView` here (`NSView` with AppKit).
public typealias InvalidatedView = UIView
#elseif canImport(AppKit)
import AppKit

/// The view type of this platform: `NSView` here (`UIView` with UIKit).
public typealias InvalidatedView = NSView
#endif

#if (canImport(UIKit) && !os(watchOS)) || canImport(AppKit)
/// An invalidation of a view: Apple's `UIViewInvalidating` / `NSViewInvalidating`, under this package's
/// name, with the same requirement — an invalidator written for Apple's wrapper works with
/// `@ViewInvalidating` once the protocol's name is changed, and back.
///
/// ```swift
/// import UpdateContext
/// import UpdateContextCompatibility
/// import UIKit
///
/// struct Glow: ViewInvalidation {                 // was: struct Glow: UIViewInvalidating
///     func invalidate(view: UIView) {
///         MainActor.assumeIsolated { view.layer.shadowOpacity = 0.5 }
///     }
/// }
///
/// extension ViewInvalidation where Self == Glow {
///     static var glow: Glow { Glow() }
/// }
///
/// final class TagView: UIView {
///     @ViewInvalidating(.layout, .glow) var label = ""
/// }
/// ```
///
/// Built in: `.display`, `.layout`, `.constraints`, `.intrinsicContentSize`; on UIKit `.configuration`
/// (iOS 14; cells, header-footer views and — iOS 15 — buttons) and `.properties` (iOS 26,
/// `setNeedsUpdateProperties()`); on AppKit `.restorableState`; and `.update` / `.update(animated:)`,
/// for views that conform to ``ViewUpdating``.
///
/// A view that conforms to ``ViewInvalidationObserving`` is told after every change of any of its
/// `@ViewInvalidating` properties: VIViewInvalidating's `VIViewCustomInvalidating` callback.
///
/// Like Apple's protocol, the requirement is not isolated to the main actor, although it runs there: in
/// Swift 6, call main-actor view methods inside `MainActor.assumeIsolated { }`, as with Apple's.
///
/// > Important: ``invalidate(view:)`` runs on the main thread (views are main-thread only; the wrapper
/// > checks), after the new value is stored.
public protocol ViewInvalidation {
    /// Invalidates `view`, whose ``ViewPropertyInvalidating`` property just changed.
    func invalidate(view: InvalidatedView)
}

/// A view told after every change of any of its `@ViewInvalidating` properties, once that property's
/// invalidations have run: VIViewInvalidating's `VIViewCustomInvalidating`, with only the name changed.
///
/// ```swift
/// import UpdateContext
/// import UpdateContextCompatibility
/// import UIKit
///
/// final class SwatchView: UIView, ViewInvalidationObserving {
///     @ViewInvalidating(.display) var color = UIColor.red
///     @ViewInvalidating(.layout) var inset: CGFloat = 4
///
///     func invalidate(view: UIView) {           // after either property changed
///         accessibilityValue = "\(inset)"
///     }
/// }
/// ```
///
/// Apple's `@Invalidating` has no such callback. After moving a view to Apple's wrapper, list an
/// invalidation that forwards to it on each property (see the Migrating article).
@MainActor
public protocol ViewInvalidationObserving: AnyObject {
    /// Called on the main thread after a `@ViewInvalidating` property of `view` (this object) changed.
    func invalidate(view: InvalidatedView)
}

extension InvalidatedView {
    /// Inside views, `@ViewInvalidating` is ``ViewPropertyInvalidating``: it takes view invalidations.
    public typealias ViewInvalidating = ViewPropertyInvalidating
}

extension InvalidationList: ViewInvalidation where Element == any ViewInvalidation {
    public func invalidate(view: InvalidatedView) {
        for invalidation in invalidations { invalidation.invalidate(view: view) }
    }
}
#endif
