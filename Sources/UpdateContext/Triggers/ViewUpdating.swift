/// A class whose view is updated through a ``ViewUpdatingContext``: what ``NeedsUpdate`` needs to
/// find the context.
///
/// ```swift
/// final class ProfileViewController: UIViewController, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @NeedsUpdate var name = ""
///     @NeedsUpdate(animated: true) var color = UIColor.black
/// }
/// ```
///
/// Main-actor classes, such as view controllers, conform with a `let` (a `ViewUpdatingContext` is
/// `Sendable`, so the property is usable from any isolation).
public protocol ViewUpdating: AnyObject {
    /// The context that ``NeedsUpdate`` properties request updates on.
    var updateContext: ViewUpdatingContext { get }
}

/// A property that requests an update of its class's ``ViewUpdating/updateContext`` when it changes.
///
/// For an `Equatable` value, setting an equal value requests nothing; any other value requests on
/// every set. `@NeedsUpdate(animated: true)` requests an animated update (and `false` a non-animated
/// one) under the usual precedence rules; plain `@NeedsUpdate` leaves the flag to the context.
///
/// ```swift
/// final class DownloadViewController: UIViewController, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @NeedsUpdate var title = ""                         // equal titles request nothing
///     @NeedsUpdate(animated: true) var progress = 0.0     // changes animate
/// }
/// ```
///
/// > Important: It works only on stored properties of classes that conform to ``ViewUpdating``; anywhere
/// > else it does not compile. Reads and writes have the thread rules of the property itself; the
/// > request it makes may come from any thread.
@propertyWrapper
public struct NeedsUpdate<Value> {
    private var value: Value
    private let animated: Bool?
    private let isEqual: ((Value, Value) -> Bool)?

    /// A property that requests on every set (the value is not `Equatable`).
    public init(wrappedValue: Value, animated: Bool? = nil) {
        value = wrappedValue
        self.animated = animated
        isEqual = nil
    }

    /// A property that requests only when the new value differs from the old one.
    public init(wrappedValue: Value, animated: Bool? = nil) where Value: Equatable {
        value = wrappedValue
        self.animated = animated
        isEqual = { $0 == $1 }
    }

    @available(*, unavailable, message: "@NeedsUpdate works only on properties of classes that conform to ViewUpdating")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<EnclosingSelf: ViewUpdating>(
        _enclosingInstance instance: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, NeedsUpdate<Value>>
    ) -> Value {
        get { instance[keyPath: storageKeyPath].value }
        set {
            let old = instance[keyPath: storageKeyPath]
            instance[keyPath: storageKeyPath].value = newValue
            if let isEqual = old.isEqual, isEqual(old.value, newValue) { return }
            instance.updateContext.setNeedsUpdate(animated: old.animated)
        }
    }
}
