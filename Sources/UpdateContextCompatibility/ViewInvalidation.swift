import Foundation
import UpdateContext

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// `.update` and `.update(animated:)`: requests an update of the object's ``ViewUpdating`` context
/// (coalesced into one delivery per cycle, with the usual animated-flag rules).
///
/// Outside views it is a ``ViewUpdatingInvalidation``, accepted only in ``ViewUpdating`` classes. In views
/// it is also a `ViewInvalidation`; a view that is not ``ViewUpdating`` stops on a precondition naming it.
public struct UpdateInvalidation: ViewUpdatingInvalidation, Sendable {
    /// The flag of the request; `nil` leaves it to the context's rules.
    public let animated: Bool?

    public init(animated: Bool? = nil) {
        self.animated = animated
    }

    /// Requests the update. Any thread.
    public func invalidate(object: any ViewUpdating) {
        object.updateContext.setNeedsUpdate(animated: animated, invalidating: object)
    }
}

/// An invalidation that requests an update of the object's context: before the property changes, the
/// setter lets it flush a pending non-animated update that its animated request would flush anyway (see
/// `ViewUpdatingContext.setNeedsUpdate(animated:file:line:_:)`), so that flush shows the old value.
protocol UpdateRequestingInvalidation {
    func flushBeforeChange(of object: any ViewUpdating)
}

extension UpdateInvalidation: UpdateRequestingInvalidation {
    func flushBeforeChange(of object: any ViewUpdating) {
        object.updateContext.flushBeforeChange(animated: animated)
    }
}

extension ViewUpdatingInvalidation where Self == UpdateInvalidation {
    /// Requests an update of the enclosing ``ViewUpdating`` object's context, flag left to its rules.
    public static var update: UpdateInvalidation { UpdateInvalidation() }

    /// Requests an update of the enclosing ``ViewUpdating`` object's context with this flag.
    public static func update(animated: Bool) -> UpdateInvalidation { UpdateInvalidation(animated: animated) }
}

#if (canImport(UIKit) && !os(watchOS)) || canImport(AppKit)
extension UpdateInvalidation: ViewInvalidation {
    /// Requests the update of a view that conforms to ``ViewUpdating`` (a precondition names a view that
    /// does not).
    public func invalidate(view: InvalidatedView) {
        guard let owner = view as Any as? any ViewUpdating else {
            fatalError("@ViewInvalidating(.update) on \(type(of: view)), which does not conform to ViewUpdating")
        }
        invalidate(object: owner)
    }
}

extension ViewInvalidation where Self == UpdateInvalidation {
    /// Requests an update of the view's ``ViewUpdating`` context, flag left to its rules.
    public static var update: UpdateInvalidation { UpdateInvalidation() }

    /// Requests an update of the view's ``ViewUpdating`` context with this flag.
    public static func update(animated: Bool) -> UpdateInvalidation { UpdateInvalidation(animated: animated) }
}

/// The UIKit and AppKit invalidations: each calls the view's own `setNeeds…`/`invalidate…` method, as
/// Apple's `UIView.Invalidations` / `NSView.Invalidations` do.
public struct ViewSystemInvalidation: ViewInvalidation, Sendable {
    enum Kind: String, Sendable {
        case display, layout, constraints, intrinsicContentSize, configuration, restorableState, properties
    }

    let kind: Kind

    /// Main thread only (the wrapper checks). A kind the view does not support (`.configuration` on a view
    /// without a configuration) is a programming error: a precondition names the kind and the type.
    public func invalidate(view: InvalidatedView) {
        let onMain = MainThreadView(view: view)
        MainActor.assumeIsolated {
            guard invalidateOnMain(onMain.view) else {
                fatalError("@ViewInvalidating(.\(kind.rawValue)) is not supported on \(type(of: onMain.view))")
            }
        }
    }

    /// The view, handed to the main actor from code already running on the main thread.
    private struct MainThreadView: @unchecked Sendable {
        // @unchecked Sendable: created and used on the main thread only (the wrapper checks before it
        // calls), so nothing crosses threads; the compiler cannot see that `assumeIsolated` runs in place.
        let view: InvalidatedView
    }

    #if canImport(UIKit) && !os(watchOS)
    @MainActor private func invalidateOnMain(_ view: UIView) -> Bool {
        switch kind {
        case .display: view.setNeedsDisplay()
        case .layout: view.setNeedsLayout()
        case .constraints: view.setNeedsUpdateConstraints()
        case .intrinsicContentSize: view.invalidateIntrinsicContentSize()
        case .configuration: return invalidateConfiguration(view)
        case .properties: return invalidateProperties(view)
        case .restorableState: return false
        }
        return true
    }

    @MainActor private func invalidateProperties(_ view: UIView) -> Bool {
        // UIKit 26's pass, through the core module, where the SDK's UIKit version can be read (this module's
        // `canImport(UIKit, _version:)` could not: the compiler found no version and took every SDK for 26).
        UIKitPropertiesPass.setNeedsUpdateProperties(of: view)
    }

    @MainActor private func invalidateConfiguration(_ view: UIView) -> Bool {
        if #available(iOS 14, tvOS 14, *) {
            switch view {
            case let cell as UICollectionViewCell: cell.setNeedsUpdateConfiguration()
            case let cell as UITableViewCell: cell.setNeedsUpdateConfiguration()
            case let header as UITableViewHeaderFooterView: header.setNeedsUpdateConfiguration()
            default:
                if #available(iOS 15, tvOS 15, *), let button = view as? UIButton {
                    button.setNeedsUpdateConfiguration()
                    return true
                }
                return false
            }
            return true
        }
        return false
    }
    #elseif canImport(AppKit)
    @MainActor private func invalidateOnMain(_ view: NSView) -> Bool {
        switch kind {
        case .display: view.needsDisplay = true
        case .layout: view.needsLayout = true
        case .constraints: view.needsUpdateConstraints = true
        case .intrinsicContentSize: view.invalidateIntrinsicContentSize()
        case .restorableState: view.invalidateRestorableState()
        case .configuration, .properties: return false
        }
        return true
    }
    #endif
}

extension ViewInvalidation where Self == ViewSystemInvalidation {
    /// The view needs display (`setNeedsDisplay()`, `needsDisplay = true`).
    public static var display: ViewSystemInvalidation { ViewSystemInvalidation(kind: .display) }
    /// The view needs layout (`setNeedsLayout()`, `needsLayout = true`).
    public static var layout: ViewSystemInvalidation { ViewSystemInvalidation(kind: .layout) }
    /// The view's constraints need updating (`setNeedsUpdateConstraints()`, `needsUpdateConstraints = true`).
    public static var constraints: ViewSystemInvalidation { ViewSystemInvalidation(kind: .constraints) }
    /// The view's intrinsic content size changed (`invalidateIntrinsicContentSize()`).
    public static var intrinsicContentSize: ViewSystemInvalidation {
        ViewSystemInvalidation(kind: .intrinsicContentSize)
    }

    #if canImport(UIKit) && !os(watchOS)
    /// The cell's (or header-footer view's, or — iOS 15 — button's) configuration needs updating
    /// (`setNeedsUpdateConfiguration()`).
    @available(iOS 14, tvOS 14, *)
    public static var configuration: ViewSystemInvalidation { ViewSystemInvalidation(kind: .configuration) }

    /// The view's properties need updating (`setNeedsUpdateProperties()`): UIKit 26 runs the view's
    /// `updateProperties()` before its next layout, with Observation tracking.
    ///
    /// Below iOS 26 there is no such pass; the closest this package offers is `.update`, a coalesced
    /// update of the view's ``ViewUpdating`` context at the end of the cycle (also before Core
    /// Animation's layout and commit). Effective when building with an SDK that has the pass (the
    /// iOS 26 SDKs; built with an older SDK it does nothing, since that UIKit has no such pass to ask for).
    @available(iOS 26, tvOS 26, visionOS 26, *)
    public static var properties: ViewSystemInvalidation { ViewSystemInvalidation(kind: .properties) }
    #endif

    #if !canImport(UIKit) && canImport(AppKit)
    /// The view's restorable state changed (`invalidateRestorableState()`).
    public static var restorableState: ViewSystemInvalidation { ViewSystemInvalidation(kind: .restorableState) }
    #endif
}
#endif
