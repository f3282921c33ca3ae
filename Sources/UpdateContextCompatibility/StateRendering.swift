import Foundation
import NotificationCoalescing
import UpdateContext

/// A controller rendered from one `Equatable` state: the shape of Rightpoint's ViewState, coalesced
/// through this package.
///
/// Mark the state property ``RenderedState``; change it as often as you like, from any thread. At most
/// once per cycle, on the main thread, ``render(state:oldState:animated:)`` gets the state at that time
/// and the state it rendered last (`nil` the first time). Equal states render nothing; a forced update
/// (`$state.context.update()`) and the lifecycle refresh render even an unchanged state.
///
/// ```swift
/// import UIKit
/// import UpdateContext
/// import UpdateContextCompatibility
///
/// struct ProfileState: Equatable { var name = ""; var isLoading = false }
///
/// final class ProfileViewController: UIViewController, StateRendering {
///     @RenderedState var state = ProfileState()
///     private let nameLabel = UILabel()
///
///     func render(state: ProfileState, oldState: ProfileState?, animated: Bool) {
///         nameLabel.text = state.name
///     }
///
///     func loaded(name: String) {
///         state.name = name            // renders once, at the end of this cycle
///         state.isLoading = false
///     }
/// }
/// ```
///
/// It is ``StateUpdatingContext`` underneath: `$state` is that context (`$state.context` for
/// `update()`, `suspend()` and the rest).
@MainActor
public protocol StateRendering: AnyObject {
    associatedtype State: Equatable
    /// Renders `state`; `oldState` is the state rendered last (`nil` the first time). Main thread.
    func render(state: State, oldState: State?, animated: Bool)
}

/// The state property of a ``StateRendering`` class: changes request a coalesced render.
///
/// `@RenderedState(animated: true)` requests animated renders. The first access (reading, writing or
/// `$state`) connects the renderer, which renders the current state at the end of that cycle. The
/// renderer holds the object weakly: a released controller renders nothing.
///
/// > Important: It works only on stored properties of ``StateRendering`` classes whose `State` is the
/// > property's type; anywhere else it does not compile. The state may be read and written from any
/// > thread; renders run on the main thread.
@propertyWrapper
public struct RenderedState<Value: Equatable & Sendable>: Sendable {
    private let box: RenderedStateBox<Value>

    /// A state rendered by the enclosing ``StateRendering`` class.
    ///
    /// - Parameters:
    ///   - wrappedValue: The initial state.
    ///   - animated: The flag of the requests its changes make (`nil` leaves it to the context's rules).
    ///   - scheduler: When a cycle ends (the main run loop by default; in tests a `ManualScheduler` created
    ///     and turned on the main thread: renders call the main-actor ``StateRendering`` method, and
    ///     one turned on another thread stops with the main actor's isolation check).
    public init(wrappedValue: Value, animated: Bool? = nil, scheduler: CoalescingScheduler = .mainRunLoop) {
        box = RenderedStateBox(state: wrappedValue, animated: animated, scheduler: scheduler)
    }

    @available(*, unavailable, message: "@RenderedState works only on properties of StateRendering classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    @available(*, unavailable, message: "@RenderedState works only on properties of StateRendering classes")
    public var projectedValue: StateUpdatingContext<Value> { fatalError("unavailable") }

    public static subscript<EnclosingSelf: StateRendering>(
        _enclosingInstance instance: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, RenderedState<Value>>
    ) -> Value where EnclosingSelf.State == Value {
        get { instance[keyPath: storageKeyPath].box.connected(to: instance).state }
        set {
            let box = instance[keyPath: storageKeyPath].box
            box.connected(to: instance).modify(
                animated: box.animated, renderedState: EnclosingSelf.self, path: storageKeyPath
            ) { $0 = newValue }
        }
    }

    public static subscript<EnclosingSelf: StateRendering>(
        _enclosingInstance instance: EnclosingSelf,
        projected projectedKeyPath: KeyPath<EnclosingSelf, StateUpdatingContext<Value>>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, RenderedState<Value>>
    ) -> StateUpdatingContext<Value> where EnclosingSelf.State == Value {
        instance[keyPath: storageKeyPath].box.connected(to: instance)
    }
}

/// The context behind one ``RenderedState`` and whether its renderer is connected.
final class RenderedStateBox<Value: Equatable & Sendable>: Sendable {
    let animated: Bool?
    private let context: StateUpdatingContext<Value>
    private let isConnected = Locked(false)

    init(state: Value, animated: Bool?, scheduler: CoalescingScheduler) {
        self.animated = animated
        context = StateUpdatingContext(state: state, scheduler: scheduler)
    }

    /// The context, with `owner`'s renderer registered the first time (weakly: the owner owns the box).
    func connected<Owner: StateRendering>(to owner: Owner) -> StateUpdatingContext<Value> where Owner.State == Value {
        let connect = isConnected.withLock { connected -> Bool in
            defer { connected = true }
            return !connected
        }
        if connect {
            let reference = WeakOwner(owner)
            context.onRender { state, oldState, animated in
                // Renders run on the main thread (the context's scheduler is a main-thread one).
                MainActor.assumeIsolated {
                    reference.owner?.render(state: state, oldState: oldState, animated: animated)
                }
            }
        }
        return context
    }
}

/// A weak reference that a renderer may hold: the owner is only touched on the main thread.
private final class WeakOwner<Owner: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable: `owner` is read only inside renders, on the main thread.
    weak var owner: Owner?
    init(_ owner: Owner) { self.owner = owner }
}
