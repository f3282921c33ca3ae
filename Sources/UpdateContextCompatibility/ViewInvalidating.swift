import UpdateContext

/// A property of a class that invalidates the object when its value changes: a coalesced update, or
/// your own invalidation — any number of them in one attribute. In a view (`UIView`, `NSView`),
/// `@ViewInvalidating` is `ViewPropertyInvalidating` instead, which takes Apple's view invalidations
/// (layout, display…) too.
///
/// The shape of Apple's `@Invalidating` (iOS 15 / macOS 12) and of its backports, down to iOS 13 /
/// macOS 10.15 and on Linux:
///
/// ```swift
/// import Foundation
/// import UpdateContext
/// import UpdateContextCompatibility
///
/// final class ScoreModel: ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     func updateView(animated: Bool) {}    // a model: its view renders
///     @ViewInvalidating(.update) var points = 0                    // one coalesced update per cycle
///     @ViewInvalidating(.update(animated: true)) var isLeading = false
/// }
/// ```
///
/// Setting a value equal to the current one invalidates nothing; any other value runs every
/// invalidation, in the order written, after storing it. Up to ten invalidations, as Apple's wrapper.
///
/// Misuse does not compile: outside a view, only ``ViewUpdatingInvalidation``s are accepted (`.update` and
/// your own), and only in a class that conforms to ``ViewUpdating``; view invalidations such as
/// `.layout` exist only inside `UIView` and `NSView` subclasses; and it works only on stored properties
/// of classes.
///
/// > Important: Invalidations run on the thread that sets the property. `.update` may run anywhere (the
/// > context takes requests from any thread); your own may run wherever your type allows.
@propertyWrapper
public struct ViewInvalidating<Value: Equatable, Invalidation: ViewUpdatingInvalidation> {
    private var value: Value
    private let invalidation: Invalidation

    /// A property running `invalidation` whenever it changes to a different value.
    public init(wrappedValue: Value, _ invalidation: Invalidation) {
        value = wrappedValue
        self.invalidation = invalidation
    }

    /// A property running 2 invalidations, in the order written, whenever it changes.
    public init<I1, I2>(wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2)
    where Invalidation == InvalidationPair<I1, I2>, I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation {
        self.init(wrappedValue: wrappedValue, InvalidationPair(invalidation1, invalidation2))
    }

    /// A property running 3 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3>(wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3)
    where
        Invalidation == InvalidationPair<InvalidationPair<I1, I2>, I3>, I1: ViewUpdatingInvalidation,
        I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation
    {
        self.init(
            wrappedValue: wrappedValue, InvalidationPair(InvalidationPair(invalidation1, invalidation2), invalidation3))
    }

    /// A property running 4 invalidations, in the order written, whenever it changes.
    public init<I1, I2, I3, I4>(
        wrappedValue: Value, _ invalidation1: I1, _ invalidation2: I2, _ invalidation3: I3, _ invalidation4: I4
    )
    where
        Invalidation == InvalidationPair<InvalidationPair<InvalidationPair<I1, I2>, I3>, I4>,
        I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation
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
        I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation, I5: ViewUpdatingInvalidation
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
        >, I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation, I5: ViewUpdatingInvalidation, I6: ViewUpdatingInvalidation
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
        >, I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation, I5: ViewUpdatingInvalidation, I6: ViewUpdatingInvalidation,
        I7: ViewUpdatingInvalidation
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
        >, I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation, I5: ViewUpdatingInvalidation, I6: ViewUpdatingInvalidation,
        I7: ViewUpdatingInvalidation, I8: ViewUpdatingInvalidation
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
        >, I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation, I5: ViewUpdatingInvalidation, I6: ViewUpdatingInvalidation,
        I7: ViewUpdatingInvalidation, I8: ViewUpdatingInvalidation, I9: ViewUpdatingInvalidation
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
        >, I1: ViewUpdatingInvalidation, I2: ViewUpdatingInvalidation, I3: ViewUpdatingInvalidation,
        I4: ViewUpdatingInvalidation, I5: ViewUpdatingInvalidation, I6: ViewUpdatingInvalidation,
        I7: ViewUpdatingInvalidation, I8: ViewUpdatingInvalidation, I9: ViewUpdatingInvalidation,
        I10: ViewUpdatingInvalidation
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

    @available(*, unavailable, message: "@ViewInvalidating works only on stored properties of classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    /// The enclosing object must conform to ``ViewUpdating``: that is what the invalidations act on.
    public static subscript<EnclosingSelf: ViewUpdating>(
        _enclosingInstance instance: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, ViewInvalidating<Value, Invalidation>>
    ) -> Value {
        get { instance[keyPath: storageKeyPath].value }
        set {
            let old = instance[keyPath: storageKeyPath]
            guard old.value != newValue else { return }
            // `.update(animated: true)` (or `.update` in an animated scope) flushes a pending non-animated
            // update before the change lands, as `@NeedsUpdate` does.
            if let requesting = old.invalidation as? any UpdateRequestingInvalidation {
                requesting.flushBeforeChange(of: instance)
            }
            instance[keyPath: storageKeyPath].value = newValue
            old.invalidation.invalidate(object: instance)
        }
    }
}

/// What a ``ViewInvalidating`` property outside a view does to its object when its value changes: `.update`,
/// or your own.
///
/// ```swift
/// import Foundation
/// import UpdateContext
/// import UpdateContextCompatibility
///
/// struct Reload: ViewUpdatingInvalidation {
///     func invalidate(object: any ViewUpdating) {
///         (object as? ListModel)?.reloadRows()
///     }
/// }
///
/// final class ListModel: ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     func updateView(animated: Bool) {}
///     @ViewInvalidating(Reload(), .update) var rows: [String] = []
///     func reloadRows() {}
/// }
/// ```
///
/// > Important: ``invalidate(object:)`` runs on the thread that sets the property, after the new value is
/// > stored.
public protocol ViewUpdatingInvalidation {
    /// Invalidates `object`, the instance whose ``ViewInvalidating`` property just changed.
    func invalidate(object: any ViewUpdating)
}

/// Two invalidations run in turn: what a list of invalidations in one attribute becomes (Apple's
/// `UIView.Invalidations.Tuple`). It is an invalidation of whatever kind both of its members are.
public struct InvalidationPair<First, Second> {
    /// The invalidation that runs first.
    public let first: First
    /// The invalidation that runs second.
    public let second: Second

    /// The two invalidations, run in this order.
    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }
}

extension InvalidationPair: Sendable where First: Sendable, Second: Sendable {}

// For every pair, not only pairs of object invalidations: inside a view, `.layout, .update(animated: true)`
// pairs a view invalidation with an update, and the update's flush must come before the change too.
extension InvalidationPair: UpdateRequestingInvalidation {
    func flushBeforeChange(of object: any ViewUpdating) {
        (first as? any UpdateRequestingInvalidation)?.flushBeforeChange(of: object)
        (second as? any UpdateRequestingInvalidation)?.flushBeforeChange(of: object)
    }
}

extension InvalidationPair: ViewUpdatingInvalidation
where First: ViewUpdatingInvalidation, Second: ViewUpdatingInvalidation {
    public func invalidate(object: any ViewUpdating) {
        first.invalidate(object: object)
        second.invalidate(object: object)
    }
}
