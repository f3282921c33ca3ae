import Foundation
import UpdateContext

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

#if (canImport(UIKit) && !os(watchOS)) || canImport(AppKit)
/// `@ViewInvalidating` inside a view: a property that invalidates its view when its value changes, with
/// Apple's invalidations (`.layout`, `.display`…), your own ``ViewInvalidation``s, and `.update`.
///
/// Inside `UIView` and `NSView` subclasses the name `ViewInvalidating` means this type (it is declared in
/// an extension of the view class), so the attribute reads as Apple's:
///
/// ```swift
/// import UpdateContext
/// import UpdateContextCompatibility
/// import UIKit
///
/// final class BadgeView: UIView, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     func updateView(animated: Bool) {}    // what .update asks for
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
            if !MainActorPlace.isCurrent {
                // fatalError: the message survives release builds (a precondition's does not).
                fatalError(
                    "@ViewInvalidating property of \(type(of: instance)) set off the main thread: views are main-thread only"
                )
            }
            let old = instance[keyPath: storageKeyPath]
            guard old.value != newValue else { return }
            if let requesting = old.invalidation as? any UpdateRequestingInvalidation,
                let object = instance as Any as? any ViewUpdating
            {
                requesting.flushBeforeChange(of: object)  // see `@ViewInvalidating` outside views
            }
            instance[keyPath: storageKeyPath].value = newValue
            old.invalidation.invalidate(view: instance)
            if let observer = instance as Any as? any ViewInvalidationObserving {
                let onMain = MainThreadObserver(observer: observer, view: instance)
                MainActor.assumeIsolated { onMain.observer.invalidate(view: onMain.view) }
            }
        }
    }
}

/// An observer and its view, handed to the main actor from code already running on the main thread.
private struct MainThreadObserver: @unchecked Sendable {
    // @unchecked Sendable: made and used on the main thread only (the setter checks it first).
    let observer: any ViewInvalidationObserving
    let view: InvalidatedView
}

#endif
