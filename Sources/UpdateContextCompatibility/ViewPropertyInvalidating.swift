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
/// ``ViewInvalidationObserving``. Any number of invalidations.
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

    /// A property running every invalidation listed, in the order written, whenever it changes to a different
    /// value: Apple's `@Invalidating(.a, .b)`, with any number of them.
    public init<First: ViewInvalidation, Second: ViewInvalidation, each Rest: ViewInvalidation>(
        wrappedValue: Value, _ first: First, _ second: Second, _ rest: repeat each Rest
    ) where Invalidation == InvalidationList<any ViewInvalidation> {
        var invalidations: [any ViewInvalidation] = [first, second]
        for invalidation in repeat each rest { invalidations.append(invalidation) }
        self.init(wrappedValue: wrappedValue, InvalidationList(invalidations))
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
