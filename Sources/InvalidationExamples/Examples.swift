// Views that use every built-in invalidation of @ViewInvalidating, custom invalidators written in Apple's
// shape, the view-level callback and the iOS 26 paths, so that `apple-typecheck matrix .` compiles them
// for iOS (UIKit, against iPhoneOS 26.2 and 18.6) and macOS (AppKit). No product exports this target; on
// Linux it holds only the platform-neutral example.
import Foundation
import UpdateContext
import UpdateContextCompatibility

/// A custom invalidation of a `ViewUpdating` object that is not a view.
struct Recount: ViewUpdatingInvalidation {
    func invalidate(object: any ViewUpdating) {
        object.updateContext.setNeedsUpdate()
    }
}

/// Platform-neutral: a model object whose property asks its view for a coalesced update.
final class Counter: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}
    @ViewInvalidating(.update, Recount()) var value = 0
    @ViewInvalidating(.update(animated: true)) var total = 0
}

#if canImport(UIKit) && !os(watchOS)
import UIKit

/// A custom invalidator exactly as written for Apple's `UIViewInvalidating`, with only the protocol's
/// name changed.
struct Focus: ViewInvalidation {
    func invalidate(view: UIView) {
        MainActor.assumeIsolated { view.setNeedsFocusUpdate() }
    }
}

extension ViewInvalidation where Self == Focus {
    static var focus: Focus { Focus() }
}

/// A UIKit view with every built-in invalidation, alone and together (any number in one attribute).
final class BadgeView: UIView, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}

    @ViewInvalidating(.display) var fill = UIColor.red
    @ViewInvalidating(.layout) var spacing: CGFloat = 4
    @ViewInvalidating(.constraints) var inset: CGFloat = 8
    @ViewInvalidating(.intrinsicContentSize) var text = ""
    @ViewInvalidating(.update) var badge = 0
    @ViewInvalidating(.update(animated: true)) var isHighlighted2 = false
    @ViewInvalidating(.display, .layout, .constraints, .intrinsicContentSize, .update(animated: false)) var title = ""
    @ViewInvalidating(.layout, .focus) var items: [String] = []
    @ViewInvalidating(
        .display, .layout, .constraints, .intrinsicContentSize, .focus, .update, .display, .layout, .constraints,
        .focus)
    var everything = 0
}

/// A plain view (not `ViewUpdating`): Apple's invalidations and custom ones need nothing more.
final class PlainView: UIView {
    @ViewInvalidating(.layout, .focus) var offset: CGFloat = 0
}

/// The view-level callback of VIViewInvalidating (`VIViewCustomInvalidating`): the view is told after
/// every change.
final class CallbackView: UIView, ViewInvalidationObserving {
    @ViewInvalidating(.display) var color = UIColor.blue
    @ViewInvalidating(.layout) var gap: CGFloat = 2

    func invalidate(view: UIView) {
        accessibilityValue = "changed"
    }
}

/// UIKit 26's `.flushUpdates`, from iOS 13: earlier changes render outside the animation.
final class ExpandingView: UIView, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}
    @ViewInvalidating(.layout, .update) var isExpanded = false

    func toggle() {
        let animate: (@escaping () -> Void) -> Void = { UIView.animate(withDuration: 0.3, animations: $0) }
        updateContext.animateWithFlushedUpdates(using: animate) {
            self.isExpanded.toggle()
            self.layoutIfNeeded()
        }
    }
}

/// A view whose context delivers inside UIKit 26's `updateProperties()` pass (the run loop below 26).
final class PassBoundView: UIView, ViewUpdating {
    let updateContext = ViewUpdatingContext.makeForUpdatePropertiesPass()
    private let label = UILabel()
    var title = "" { didSet { updateContext.setNeedsUpdate() } }

    override init(frame: CGRect) {
        super.init(frame: frame)
        startUpdatingView()  // binds the context to this view's pass (iOS 26)
    }

    func updateView(animated: Bool) { label.text = title }

    @available(*, unavailable)
    required init?(coder: NSCoder) { fatalError("not used") }

    #if canImport(UIKit, _version: 9000)
    @available(iOS 26, tvOS 26, visionOS 26, *)
    override func updateProperties() {
        super.updateProperties()
        updateViewIfNeeded()
    }
    #endif
}

/// A view controller on the canonical path, bound the same way by `startUpdatingView()`.
final class PassViewController: UIViewController, ViewUpdating {
    let updateContext = ViewUpdatingContext.makeForUpdatePropertiesPass()
    @NeedsUpdate var count = 0

    override func viewDidLoad() {
        super.viewDidLoad()
        startUpdatingView()
    }

    func updateView(animated: Bool) { title = "\(count)" }

    #if canImport(UIKit, _version: 9000)
    @available(iOS 26, tvOS 26, visionOS 26, *)
    override func updateProperties() {
        super.updateProperties()
        updateViewIfNeeded()
    }
    #endif
}

/// A controller whose context is not its own `updateContext` (no `ViewUpdating`): bound explicitly.
final class PassBoundViewController: UIViewController {
    let context = ViewUpdatingContext.makeForUpdatePropertiesPass()

    override func viewDidLoad() {
        super.viewDidLoad()
        context.deliverInUpdateProperties(of: self)
    }

    #if canImport(UIKit, _version: 9000)
    @available(iOS 26, tvOS 26, visionOS 26, *)
    override func updateProperties() {
        super.updateProperties()
        context.updateIfNeeded()
    }
    #endif
}

/// A cell whose configuration is invalidated (iOS 14, like Apple's `.configuration`).
@available(iOS 14, tvOS 14, *)
final class BadgeCell: UICollectionViewCell {
    @ViewInvalidating(.configuration, .layout) var count = 0
}

#if canImport(UIKit, _version: 9000)
/// iOS 26: `.properties` (UIKit's `setNeedsUpdateProperties()`); only with an iOS 26 SDK.
@available(iOS 26, tvOS 26, visionOS 26, *)
final class PropertiesView: UIView {
    @ViewInvalidating(.properties) var title = ""
    @ViewInvalidating(.properties, .layout) var subtitle = ""
}
#endif
#elseif canImport(AppKit)
import AppKit

/// A custom invalidator exactly as written for Apple's `NSViewInvalidating`, with only the protocol's
/// name changed.
struct Focus: ViewInvalidation {
    func invalidate(view: NSView) {
        MainActor.assumeIsolated { view.needsDisplay = true }
    }
}

extension ViewInvalidation where Self == Focus {
    static var focus: Focus { Focus() }
}

/// An AppKit view with every built-in invalidation, alone and together.
final class BadgeView: NSView, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}

    @ViewInvalidating(.display) var fill = NSColor.red
    @ViewInvalidating(.layout) var spacing: CGFloat = 4
    @ViewInvalidating(.constraints) var inset: CGFloat = 8
    @ViewInvalidating(.intrinsicContentSize) var text = ""
    @ViewInvalidating(.restorableState) var selection = 0
    @ViewInvalidating(.update) var badge = 0
    @ViewInvalidating(.update(animated: true)) var isHighlighted = false
    @ViewInvalidating(
        .display, .layout, .constraints, .intrinsicContentSize, .restorableState, .update(animated: false))
    var title = ""
    @ViewInvalidating(.layout, .focus) var items: [String] = []
}

/// UIKit 26's `.flushUpdates` with AppKit's animation context.
final class ExpandingView: NSView, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    /// Renders through `updateContext.onUpdate` closures (or nothing: a model whose view renders).
    func updateView(animated: Bool) {}
    @ViewInvalidating(.layout, .update) var isExpanded = false

    func toggle() {
        let animate: (@escaping () -> Void) -> Void = { animations in
            NSAnimationContext.runAnimationGroup { _ in animations() }
        }
        updateContext.animateWithFlushedUpdates(using: animate) {
            self.isExpanded.toggle()
        }
    }
}

/// The view-level callback (VIViewCustomInvalidating).
final class CallbackView: NSView, ViewInvalidationObserving {
    @ViewInvalidating(.display) var color = NSColor.blue

    func invalidate(view: NSView) {
        toolTip = "changed"
    }
}
#endif
