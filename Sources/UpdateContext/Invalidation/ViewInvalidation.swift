import Foundation

// UIKit views exist on iOS, tvOS and visionOS (watchOS has UIKit but no UIView); AppKit views on macOS.
#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// What a ``ViewInvalidating`` property does to the object it belongs to when its value changes.
///
/// Conform to invalidate in your own way — both seeds allowed custom invalidations:
///
/// ```swift
/// struct Reload: ViewInvalidation {
///     func invalidate(_ object: AnyObject) {
///         (object as? ListController)?.reloadRows()
///     }
/// }
///
/// final class ListController: ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @ViewInvalidating(Reload(), .update) var rows: [String] = []
///     func reloadRows() {}
/// }
/// ```
///
/// Built in: `.update` and `.update(animated:)` everywhere; on UIKit and AppKit `.display`, `.layout`,
/// `.constraints` and `.intrinsicContentSize` (for views); `.configuration` on UIKit (iOS 14, for cells,
/// header-footer views and — from iOS 15 — buttons); `.restorableState` on AppKit.
///
/// > Important: ``invalidate(_:)`` runs on the thread that sets the property, after the new value is
/// > stored. The UIKit and AppKit invalidations must run on the main thread (a precondition says so);
/// > `.update` may run anywhere.
public protocol ViewInvalidation {
    /// Invalidates `object`, the instance whose ``ViewInvalidating`` property just changed.
    func invalidate(_ object: AnyObject)
}

/// `.update` and `.update(animated:)`: requests an update of the enclosing object's ``ViewUpdating``
/// context (coalesced into one delivery per cycle, with the usual animated-flag rules).
public struct UpdateInvalidation: ViewInvalidation, Sendable {
    /// The flag of the request; `nil` leaves it to the context's rules.
    public let animated: Bool?

    public init(animated: Bool? = nil) {
        self.animated = animated
    }

    /// Any thread. An object that is not ``ViewUpdating`` is a programming error (a precondition names it).
    public func invalidate(_ object: AnyObject) {
        guard let owner = object as? any ViewUpdating else {
            preconditionFailure(
                "@ViewInvalidating(.update) on \(type(of: object)), which does not conform to ViewUpdating")
        }
        owner.updateContext.setNeedsUpdate(animated: animated)
    }
}

extension ViewInvalidation where Self == UpdateInvalidation {
    /// Requests an update of the enclosing ``ViewUpdating`` object's context, flag left to its rules.
    public static var update: UpdateInvalidation { UpdateInvalidation() }

    /// Requests an update of the enclosing ``ViewUpdating`` object's context with this flag.
    public static func update(animated: Bool) -> UpdateInvalidation { UpdateInvalidation(animated: animated) }
}

#if (canImport(UIKit) && !os(watchOS)) || canImport(AppKit)
/// The UIKit and AppKit invalidations: each calls the view's own `setNeeds…`/`invalidate…` method.
public struct ViewSystemInvalidation: ViewInvalidation, Sendable {
    enum Kind: String, Sendable {
        case display, layout, constraints, intrinsicContentSize, configuration, restorableState
    }

    let kind: Kind

    /// Main thread only (a precondition says so). A kind the object does not support is a programming
    /// error (a precondition names the kind and the type).
    public func invalidate(_ object: AnyObject) {
        precondition(
            Thread.isMainThread,
            "@ViewInvalidating(.\(kind.rawValue)) set off the main thread: views are main-thread only")
        let onMain = MainThreadObject(object: object)
        MainActor.assumeIsolated {
            guard invalidateOnMain(onMain.object) else {
                preconditionFailure(
                    "@ViewInvalidating(.\(kind.rawValue)) is not supported on \(type(of: onMain.object))")
            }
        }
    }

    /// The object, handed to the main actor from code already running on the main thread.
    private struct MainThreadObject: @unchecked Sendable {
        // @unchecked Sendable: it is created and used on the main thread only (checked just before), so
        // nothing crosses threads; the compiler cannot see that `assumeIsolated` runs in place.
        let object: AnyObject
    }

    #if canImport(UIKit) && !os(watchOS)
    @MainActor private func invalidateOnMain(_ object: AnyObject) -> Bool {
        if kind == .configuration { return invalidateConfiguration(object) }
        guard let view = object as? UIView else { return false }
        switch kind {
        case .display: view.setNeedsDisplay()
        case .layout: view.setNeedsLayout()
        case .constraints: view.setNeedsUpdateConstraints()
        case .intrinsicContentSize: view.invalidateIntrinsicContentSize()
        case .configuration, .restorableState: return false
        }
        return true
    }

    @MainActor private func invalidateConfiguration(_ object: AnyObject) -> Bool {
        if #available(iOS 14, tvOS 14, *) {
            switch object {
            case let cell as UICollectionViewCell: cell.setNeedsUpdateConfiguration()
            case let cell as UITableViewCell: cell.setNeedsUpdateConfiguration()
            case let view as UITableViewHeaderFooterView: view.setNeedsUpdateConfiguration()
            default:
                if #available(iOS 15, tvOS 15, *), let button = object as? UIButton {
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
    @MainActor private func invalidateOnMain(_ object: AnyObject) -> Bool {
        guard let view = object as? NSView else { return false }
        switch kind {
        case .display: view.needsDisplay = true
        case .layout: view.needsLayout = true
        case .constraints: view.needsUpdateConstraints = true
        case .intrinsicContentSize: view.invalidateIntrinsicContentSize()
        case .restorableState: view.invalidateRestorableState()
        case .configuration: return false
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
    #endif

    #if !canImport(UIKit) && canImport(AppKit)
    /// The view's restorable state changed (`invalidateRestorableState()`).
    public static var restorableState: ViewSystemInvalidation { ViewSystemInvalidation(kind: .restorableState) }
    #endif
}
#endif
