// Views that use every built-in invalidation of @ViewInvalidating, so that `apple-typecheck matrix .`
// compiles them for iOS (UIKit) and macOS (AppKit). No product exports this target; on Linux it holds
// only the platform-neutral example.
import Foundation
import UpdateContext

#if canImport(UIKit) && !os(watchOS)
import UIKit

/// A UIKit view with every built-in invalidation, alone and together.
final class BadgeView: UIView, ViewUpdating {
    let updateContext = ViewUpdatingContext()

    @ViewInvalidating(.display) var fill = UIColor.red
    @ViewInvalidating(.layout) var spacing: CGFloat = 4
    @ViewInvalidating(.constraints) var inset: CGFloat = 8
    @ViewInvalidating(.intrinsicContentSize) var text = ""
    @ViewInvalidating(.update) var badge = 0
    @ViewInvalidating(.update(animated: true)) var isHighlighted2 = false
    @ViewInvalidating(.display, .layout, .constraints, .intrinsicContentSize, .update(animated: false)) var title = ""
    @ViewInvalidating(.layout, Recount()) var items: [String] = []
}

/// A cell whose configuration is invalidated (iOS 14, like Apple's `.configuration`).
@available(iOS 14, tvOS 14, *)
final class BadgeCell: UICollectionViewCell {
    @ViewInvalidating(.configuration, .layout) var count = 0
}
#elseif canImport(AppKit)
import AppKit

/// An AppKit view with every built-in invalidation, alone and together.
final class BadgeView: NSView, ViewUpdating {
    let updateContext = ViewUpdatingContext()

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
    @ViewInvalidating(.layout, Recount()) var items: [String] = []
}
#endif

/// A custom invalidation, as both seeds allow: it gets the object whose property changed.
struct Recount: ViewInvalidation {
    func invalidate(_ object: AnyObject) {
        (object as? any ViewUpdating)?.updateContext.setNeedsUpdate()
    }
}

/// Platform-neutral: a model object whose property asks its view for a coalesced update.
final class Counter: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    @ViewInvalidating(.update, Recount()) var value = 0
}
