/// A property of a class that invalidates the object when its value changes: layout, display, a
/// coalesced update, or your own invalidation — any number of them in one attribute.
///
/// The shape of Apple's `@Invalidating` (iOS 15 / macOS 12) and of its backports, down to iOS 13 /
/// macOS 10.15 and on Linux:
///
/// ```swift
/// final class BadgeView: UIView, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @ViewInvalidating(.display, .intrinsicContentSize) var text = ""
///     @ViewInvalidating(.layout, .update(animated: true)) var isExpanded = false
/// }
/// ```
///
/// Setting a value equal to the current one invalidates nothing; any other value runs every
/// invalidation, in the order written, after storing it. `.update` asks the enclosing ``ViewUpdating``
/// object's context for a coalesced update, so one property can invalidate layout and ask for one render
/// at the end of the cycle. See ``ViewInvalidation`` for the built-in invalidations and custom ones.
///
/// > Important: It works only on stored properties of classes (anywhere else it does not compile).
/// > Invalidations run on the thread that sets the property: UIKit and AppKit ones need the main thread
/// > (a precondition says so), `.update` and your own may run anywhere your type allows.
@propertyWrapper
public struct ViewInvalidating<Value: Equatable> {
    private var value: Value
    private let invalidations: [any ViewInvalidation]

    /// A property running `invalidations` whenever it changes to a different value.
    public init<each Invalidation: ViewInvalidation>(
        wrappedValue: Value, _ invalidations: repeat each Invalidation
    ) {
        value = wrappedValue
        var list: [any ViewInvalidation] = []
        for invalidation in repeat each invalidations {
            list.append(invalidation)
        }
        self.invalidations = list
    }

    @available(*, unavailable, message: "@ViewInvalidating works only on stored properties of classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance instance: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, ViewInvalidating<Value>>
    ) -> Value {
        get { instance[keyPath: storageKeyPath].value }
        set {
            let old = instance[keyPath: storageKeyPath]
            guard old.value != newValue else { return }
            instance[keyPath: storageKeyPath].value = newValue
            for invalidation in old.invalidations {
                invalidation.invalidate(instance)
            }
        }
    }
}
