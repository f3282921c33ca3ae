import Foundation
import NotificationCoalescing

/// One `Equatable` state per view, rendered at most once per cycle with the state it had before.
///
/// Change the state as often as you like; at the end of the cycle every renderer gets the state as it
/// is then, with the state last rendered. A cycle whose changes cancel out renders nothing.
///
/// ```swift
/// struct ProfileState: Equatable { var name = ""; var isLoading = false }
///
/// let view = StateUpdatingContext(state: ProfileState())
/// view.onRender { state, oldState, animated in
///     nameLabel.text = state.name
///     if state.isLoading != oldState?.isLoading { spinner.isHidden = !state.isLoading }
/// }
/// view.update { $0.name = "Ada"; $0.isLoading = false }
/// ```
///
/// > Important: `state` and ``update(animated:_:)`` may be used from any thread (the state is behind a
/// > lock); renderers run on the main thread, one delivery at a time, through ``context``, whose rules
/// > (the animated flag, `update()`, suspension, lifecycle refresh) apply unchanged.
public final class StateUpdatingContext<State: Equatable> {
    /// The context that schedules renders: use it for `update()`, `animated`, `suspend()` and the rest.
    public let context: ViewUpdatingContext

    private let storage: Locked<State>
    /// The state last rendered; main thread only (read and written inside deliveries).
    private nonisolated(unsafe) var lastRendered: State?
    /// What this delivery renders (the state, and the state before), or `nil` when it renders nothing;
    /// set by the first updater of each delivery, read by the renderers after it. Main thread only.
    private nonisolated(unsafe) var frame: (state: State, oldState: State?)?

    /// Creates a context holding `state`; nothing renders until a renderer is registered and a cycle
    /// (or `context.update()`) delivers.
    ///
    /// - Parameters:
    ///   - state: The initial state.
    ///   - animated: The default flag of the underlying context.
    ///   - scheduler: When a cycle ends (see ``ViewUpdatingContext/init(animated:scheduler:refreshEvents:center:)``).
    public init(state: State, animated: Bool = false, scheduler: CoalescingScheduler = .mainRunLoop) {
        storage = Locked(state)
        context = ViewUpdatingContext(animated: animated, scheduler: scheduler)
        // Registered first, so it runs first in every delivery: it decides what the renderers get.
        context.onUpdate { [weak self] _ in self?.prepareFrame() }
    }

    /// The current state. Setting a different value requests a render (an equal one requests nothing).
    public var state: State {
        get { storage.withLock { $0 } }
        set { update { $0 = newValue } }
    }

    /// Changes the state in place; requests one render if the result differs from the state before.
    ///
    /// - Parameters:
    ///   - animated: The flag of the request (`nil` leaves it to the context's rules).
    ///   - body: The change, run under the state's lock: do not call back into this context from it.
    public func update(animated: Bool? = nil, _ body: (inout State) -> Void) {
        let changed = storage.withLock { state -> Bool in
            let before = state
            body(&state)
            return state != before
        }
        if changed { context.setNeedsUpdate(animated: animated) }
    }

    /// Registers a renderer, called on the main thread with the state at render time, the state of the
    /// previous render (`nil` the first time), and the delivery's animated flag.
    ///
    /// - Returns: A token; `remove()` removes the renderer.
    @discardableResult
    public func onRender(_ render: @escaping (_ state: State, _ oldState: State?, _ animated: Bool) -> Void)
        -> ViewUpdatingContext.ViewUpdater
    {
        context.onUpdate { [weak self] animated in
            guard let frame = self?.frame else { return }
            render(frame.state, frame.oldState, animated)
        }
    }

    private func prepareFrame() {
        let current = storage.withLock { $0 }
        guard context.updaterCount > 1, lastRendered != current else {
            frame = nil
            return
        }
        frame = (current, lastRendered)
        lastRendered = current
    }
}

// @unchecked Sendable: the state is behind a lock; `lastRendered` and `frame` are touched only inside
// deliveries, which run on the main thread one at a time; `context` is Sendable.
extension StateUpdatingContext: @unchecked Sendable where State: Sendable {}
