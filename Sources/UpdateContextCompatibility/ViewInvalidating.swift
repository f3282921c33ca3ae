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
/// invalidation, in the order written, after storing it. Any number of invalidations.
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

    /// A property running every invalidation listed, in the order written, whenever it changes to a different
    /// value: Apple's `@Invalidating(.a, .b)`, with any number of them.
    public init<First: ViewUpdatingInvalidation, Second: ViewUpdatingInvalidation, each Rest: ViewUpdatingInvalidation>(
        wrappedValue: Value, _ first: First, _ second: Second, _ rest: repeat each Rest
    ) where Invalidation == InvalidationList<any ViewUpdatingInvalidation> {
        var invalidations: [any ViewUpdatingInvalidation] = [first, second]
        for invalidation in repeat each rest { invalidations.append(invalidation) }
        self.init(wrappedValue: wrappedValue, InvalidationList(invalidations))
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

/// Invalidations run in turn, in the order written: what a list of them in one attribute becomes (Apple's
/// `Invalidations.Tuple`). Outside views its elements are ``ViewUpdatingInvalidation``s; inside them,
/// ``ViewInvalidation``s.
public struct InvalidationList<Element> {
    let invalidations: [Element]

    init(_ invalidations: [Element]) {
        self.invalidations = invalidations
    }
}

// Whatever its elements: inside a view, `.layout, .update(animated: true)` lists a view invalidation with an
// update, and the update's flush must come before the change too.
extension InvalidationList: UpdateRequestingInvalidation {
    func flushBeforeChange(of object: any ViewUpdating) {
        for case let requesting as any UpdateRequestingInvalidation in invalidations {
            requesting.flushBeforeChange(of: object)
        }
    }
}

extension InvalidationList: ViewUpdatingInvalidation where Element == any ViewUpdatingInvalidation {
    public func invalidate(object: any ViewUpdating) {
        for invalidation in invalidations { invalidation.invalidate(object: object) }
    }
}
