import Foundation

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

/// `@ViewInvalidating` inside a view: a property that invalidates its view when its value changes, with
/// Apple's invalidations (`.layout`, `.display`…), your own ``ViewInvalidation``s, and `.update`.
///
/// Inside `UIView` and `NSView` subclasses the name `ViewInvalidating` means this type (it is declared in
/// an extension of the view class), so the attribute reads as Apple's:
///
/// ```swift
/// import UIKit
///
/// final class BadgeView: UIView, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @ViewInvalidating(.display, .intrinsicContentSize) var text = ""
///     @ViewInvalidating(.layout, .update(animated: true)) var isExpanded = false
/// }
/// ```
///
/// Setting a value equal to the current one invalidates nothing; any other value runs every
/// invalidation, in the order written, after storing it, then tells the view if it conforms to
/// ``ViewInvalidationObserving``. Up to ten invalidations.
///
/// > Important: Views are main-thread only: setting the property elsewhere stops on a precondition.
/// > `.update` in a view that does not conform to ``ViewUpdating`` compiles (Swift gives a property wrapper
/// > a single enclosing-instance subscript, so the view's one cannot also demand `ViewUpdating`) and stops
/// > on a precondition that names the view at the first change.
@propertyWrapper
public struct ViewPropertyInvalidating<Value: Equatable, Invalidation: ViewInvalidation> {
    private var value: Value
    private let invalidation: Invalidation

    /// A property running `invalidation` whenever it changes to a different value.
    public init(wrappedValue: Value, _ invalidation: Invalidation) {
        value = wrappedValue
        self.invalidation = invalidation
    }

    /// A property running 2 invalidations, in the order written, whenever it changes.
    public init<I1, I2>(wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2)
    where Invalidation == InvalidationPair<I1, I2>, I1: ViewInvalidation, I2: ViewInvalidation {
        self.init(wrappedValue: wrappedValue, InvalidationPair(invalidation1, invalidation2))
    }

    /// A property running 3 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3>(wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3)
    where
        Invalidation == InvalidationPair<InvalidationPair<I1, I2>, I3>, I1: ViewInvalidation, I2: ViewInvalidation,
        I3: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue, InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3))
    }

    /// A property running 4 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4
    )
    where
        Invalidation == InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I1: ViewInvalidation,
        I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3), invalidation4))
    }

    /// A property running 5 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4, I5>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4,
        _ invalidation5: I5
    )
    where
        Invalidation == InvalidationPair<InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I5>,
        I1: ViewInvalidation, I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation, I5: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(
                    InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3), invalidation4),
                invalidation5))
    }

    /// A property running 6 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4, I5, I6>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4,
        _ invalidation5: I5, _ invalidation6: I6
    )
    where
        Invalidation == InvalidationPair<
            InvalidationPair<InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I5>, I6
        >, I1: ViewInvalidation, I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation, I5: ViewInvalidation,
        I6: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(
                    InvalidationPair(
                        InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3), invalidation4),
                    invalidation5), invalidation6))
    }

    /// A property running 7 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4, I5, I6, I7>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4,
        _ invalidation5: I5, _ invalidation6: I6, _ invalidation7: I7
    )
    where
        Invalidation == InvalidationPair<
            InvalidationPair<
                InvalidationPair<InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I5>, I6
            >, I7
        >, I1: ViewInvalidation, I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation, I5: ViewInvalidation,
        I6: ViewInvalidation, I7: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(
                    InvalidationPair(
                        InvalidationPair(
                            InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3),
                            invalidation4), invalidation5), invalidation6), invalidation7))
    }

    /// A property running 8 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4, I5, I6, I7, I8>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4,
        _ invalidation5: I5, _ invalidation6: I6, _ invalidation7: I7, _ invalidation8: I8
    )
    where
        Invalidation == InvalidationPair<
            InvalidationPair<
                InvalidationPair<
                    InvalidationPair<InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I5>, I6
                >, I7
            >, I8
        >, I1: ViewInvalidation, I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation, I5: ViewInvalidation,
        I6: ViewInvalidation, I7: ViewInvalidation, I8: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(
                    InvalidationPair(
                        InvalidationPair(
                            InvalidationPair(
                                InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3),
                                invalidation4), invalidation5), invalidation6), invalidation7), invalidation8))
    }

    /// A property running 9 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4, I5, I6, I7, I8, I9>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4,
        _ invalidation5: I5, _ invalidation6: I6, _ invalidation7: I7, _ invalidation8: I8, _ invalidation9: I9
    )
    where
        Invalidation == InvalidationPair<
            InvalidationPair<
                InvalidationPair<
                    InvalidationPair<
                        InvalidationPair<InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I5>, I6
                    >, I7
                >, I8
            >, I9
        >, I1: ViewInvalidation, I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation, I5: ViewInvalidation,
        I6: ViewInvalidation, I7: ViewInvalidation, I8: ViewInvalidation, I9: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(
                    InvalidationPair(
                        InvalidationPair(
                            InvalidationPair(
                                InvalidationPair(
                                    InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3),
                                    invalidation4), invalidation5), invalidation6), invalidation7), invalidation8),
                invalidation9))
    }

    /// A property running 10 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4, I5, I6, I7, I8, I9, I10>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4,
        _ invalidation5: I5, _ invalidation6: I6, _ invalidation7: I7, _ invalidation8: I8, _ invalidation9: I9,
        _ invalidation10: I10
    )
    where
        Invalidation == InvalidationPair<
            InvalidationPair<
                InvalidationPair<
                    InvalidationPair<
                        InvalidationPair<
                            InvalidationPair<InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>, I5>,
                            I6
                        >, I7
                    >, I8
                >, I9
            >, I10
        >, I1: ViewInvalidation, I2: ViewInvalidation, I3: ViewInvalidation, I4: ViewInvalidation, I5: ViewInvalidation,
        I6: ViewInvalidation, I7: ViewInvalidation, I8: ViewInvalidation, I9: ViewInvalidation, I10: ViewInvalidation
    {
        self.init(
            wrappedValue: wrappedValue,
            InvalidationPair(
                InvalidationPair(
                    InvalidationPair(
                        InvalidationPair(
                            InvalidationPair(
                                InvalidationPair(
                                    InvalidationPair(
                                        InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3),
                                        invalidation4), invalidation5), invalidation6), invalidation7), invalidation8),
                    invalidation9), invalidation10))
    }

    @available(*, unavailable, message: "@ViewInvalidating works only on stored properties of views")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// The enclosing object must be a view: that is what the invalidations act on.
    public static subscript<EnclosingSelf: InvalidatedView>(
        _enclosingInstance instance: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, ViewPropertyInvalidating<Value, Invalidation>>
    ) -> Value {
        get { instance[keyPath: storageKeyPath].value }
        set {
            precondition(
                Thread.isMainThread,
                "@ViewInvalidating property of \(type(of: instance)) set off the main thread: views are main-thread only"
            )
            let old = instance[keyPath: storageKeyPath]
            guard old.value != newValue else { return }
            instance[keyPath: storageKeyPath].value = newValue
            old.invalidation.invalidate(view: instance)
            if let observer = instance as Any as? any ViewInvalidationObserving {
                let onMain = MainThreadObserver(observer: observer, view: instance)
                MainActor.assumeIsolated { onMain.observer.invalidate(view: onMain.view) }
            }
        }
    }
}

/// A view told after every change of any of its `@ViewInvalidating` properties, once that property's
/// invalidations have run: VIViewInvalidating's `VIViewCustomInvalidating`, with only the name changed.
///
/// ```swift
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

/// An observer and its view, handed to the main actor from code already running on the main thread.
private struct MainThreadObserver: @unchecked Sendable {
    // @unchecked Sendable: made and used on the main thread only (the setter checks it first).
    let observer: any ViewInvalidationObserving
    let view: InvalidatedView
}

extension InvalidatedView {
    /// Inside views, `@ViewInvalidating` is ``ViewPropertyInvalidating``: it takes view invalidations.
    public typealias ViewInvalidating = ViewPropertyInvalidating
}

extension InvalidationPair: ViewInvalidation where First: ViewInvalidation, Second: ViewInvalidation {
    public func invalidate(view: InvalidatedView) {
        first.invalidate(view: view)
        second.invalidate(view: view)
    }
}
#endif
