import Foundation
import NotificationCoalescing

/// One `Equatable` state per view, rendered at most once per cycle with the state it had before.
///
/// Change the state as often as you like; at the end of the cycle every renderer gets the state as it
/// is then, with the state it last rendered. A cycle whose changes cancel out renders nothing; a forced
/// update (`context.update()`, the lifecycle refresh) renders even an unchanged state.
///
/// ```swift
/// import Foundation
/// import UpdateContext
///
/// struct ProfileState: Equatable { var name = ""; var isLoading = false }
///
/// let view = StateUpdatingContext(state: ProfileState())
/// view.onRender { state, oldState, animated in
///     print(state.name)
///     if state.isLoading != oldState?.isLoading { print("spinner:", state.isLoading) }
/// }
/// view.modify { $0.name = "Ada"; $0.isLoading = false }
/// ```
///
/// > Important: `state` and ``modify(animated:file:line:_:)`` may be used from any thread (the state is behind a
/// > lock, and no user code runs under it: not the body, not `==`); renderers run on the main thread,
/// > one delivery at a time, through ``context``, whose rules (the animated flag, `update()`,
/// > suspension, lifecycle refresh, removal) apply unchanged.
public final class StateUpdatingContext<State: Equatable> {
    /// The context that schedules renders: use it for `update()`, `animated`, `suspend()` and the rest.
    /// Removing its updaters removes the renderers; nothing of this type's own machinery lives there.
    public let context: ViewUpdatingContext

    private struct Stored {
        var state: State
        /// Bumped by every committed change: a body that ran on an older state runs again.
        var version: UInt64 = 0
        /// Threads running an ``modify(animated:file:line:_:)`` body now (to stop a nested call with a message).
        var bodyThreads: [ThreadIdentity] = []
        /// Whether a change asked not to animate has been committed and not rendered yet.
        var nonAnimatedPending = false
        /// The state before the first change asked to animate that followed a non-animated one: what the
        /// early non-animated delivery (the precedence rules' flush) renders, so that the animated change
        /// is not shown without animation there and animates at the end of the cycle.
        var flushState: State?
    }

    private let storage: Locked<Stored>

    /// Creates a context holding `state`. Each renderer renders it at the end of the cycle in which it
    /// is registered (with `oldState == nil`), then whenever it changes.
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`.
    ///   - state: The initial state.
    ///   - animated: The default flag of the underlying context.
    ///   - scheduler: When a cycle ends (see
    ///     ``ViewUpdatingContext/init(label:animated:scheduler:refreshEvents:center:file:line:)``).
    ///   - refreshEvents: The lifecycle events that force a render (see the same initialiser).
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public init(
        label: String? = nil,
        state: State,
        animated: Bool = false,
        scheduler: CoalescingScheduler = .mainRunLoop,
        refreshEvents: [Notification.Name] = ViewUpdatingContext.defaultRefreshEvents,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        storage = Locked(Stored(state: state))
        context = ViewUpdatingContext(
            label: label, animated: animated, scheduler: scheduler, refreshEvents: refreshEvents, file: file,
            line: line)
    }

    /// What diagnostics call this context (its underlying ``ViewUpdatingContext``'s label). Any thread.
    public var label: String { context.label }

    /// The current state. Setting a different value requests a render (an equal one requests nothing).
    ///
    /// Any thread, including from inside an ``modify(animated:file:line:_:)`` body (it reads the state before the
    /// body's change).
    public var state: State {
        get { storage.withLock { $0.state } }
        // A setter cannot see its caller's line: diagnostics name the property.
        set { modify(animated: nil, site: RequestSite(.named("StateUpdatingContext.state")), { $0 = newValue }) }
    }

    /// Changes the state; requests one render if the result differs from the state before.
    ///
    /// The body runs on a copy, outside any lock, and the copy is stored if no other thread changed the
    /// state meanwhile; otherwise the body runs again on the newer state. An animated change made while a
    /// non-animated one is pending runs it twice too: once to learn that it changes the state, and again after
    /// the pending state is rendered. Keep it free of side effects.
    ///
    /// - Parameters:
    ///   - animated: The flag of the request (`nil` leaves it to the context's rules).
    ///   - file: The caller's file (`#fileID`): what diagnostics name, and the message of a nested call.
    ///   - line: The caller's line.
    ///   - body: The change. It may read ``state``; calling `modify` (or setting ``state``) from inside it is
    ///     a programming error: it stops the program, in every build, with a message naming it and the
    ///     caller's line.
    ///
    /// Inside ``withUpdateTransaction(_:_:)`` the request carries the scope's transaction; an animated one
    /// made while a non-animated change is pending first renders the state before this change, not
    /// animated, then animates this one (see ``onRender(file:line:_:)``).
    ///
    /// Named `modify`, not `update`: on a ``ViewUpdatingContext`` `update()` renders now; this changes state.
    public func modify(
        animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line, _ body: (inout State) -> Void
    ) {
        modify(animated: animated, site: RequestSite(file: file, line: line), file: file, line: line, body)
    }

    /// `modify(animated:)` for a `@RenderedState` property of `owner` (the wrapper's storage at `path`):
    /// diagnostics name the property.
    package func modify(
        animated: Bool?, renderedState owner: Any.Type, path: AnyKeyPath, _ body: (inout State) -> Void
    ) {
        modify(
            animated: animated, site: RequestSite(.property(owner: owner, path: path, wrapper: "@RenderedState")),
            body)
    }

    /// `modify(animated:)`, its request named `site` (`file` and `line` name a nested call's misuse).
    private func modify(
        animated: Bool?, site: RequestSite, file: StaticString = #fileID, line: UInt = #line,
        _ body: (inout State) -> Void
    ) {
        // The early flush's state follows the request's effective flag (a scope's transaction included).
        if commit(animated: UpdateTransaction.effectiveFlag(of: animated), file: file, line: line, body) {
            context.storage.setNeedsUpdate(animated, site: site)
        }
    }

    /// Changes the state like ``modify(animated:file:line:_:)``, and requests its render with `transaction` (see
    /// ``ViewUpdatingContext/setNeedsUpdate(transaction:file:line:)``). A change that leaves the state equal requests
    /// nothing: the transaction's completions are then called at once, as dropped
    /// (``UpdateCompletion/DropReason/nothingRequested``).
    public func modify(
        transaction: UpdateTransaction, file: StaticString = #fileID, line: UInt = #line,
        _ body: (inout State) -> Void
    ) {
        if commit(animated: transaction.isAnimated, file: file, line: line, body) {
            context.setNeedsUpdate(transaction: transaction, file: file, line: line)
        } else {
            transaction.tellUnrequestedDropped(.nothingRequested)
        }
    }

    /// Runs `body` on the state until it commits; returns whether the state changed. An animated change
    /// (`animated`, the request's effective flag) made while a non-animated request is pending keeps the rules'
    /// early flush from showing it: on the main thread, once the body has changed the state (a body that
    /// leaves it equal flushes nothing), the flush is made, once — outside the body, so a renderer of the flush
    /// may change the state — and renders the state before the change (as a `@NeedsUpdate` property does),
    /// and the body runs again on the state the flush left; elsewhere, and when a non-animated request is
    /// pending again by the time the change commits (another thread's), the state before the change is kept
    /// for the flush the rules make when the requests are applied in arrival order.
    private func commit(animated: Bool?, file: StaticString, line: UInt, _ body: (inout State) -> Void) -> Bool {
        let me = ThreadIdentity.current
        let storage = context.storage
        let mayFlushFirst =
            animated == true && storage.isOnSchedulerThread && !storage.isDelivering
        /// The early flush was made (once, and only for a change: an equal state requests nothing).
        var flushesFirst = false
        while true {
            let (before, version) = self.storage.withLock { stored -> (State, UInt64) in
                if stored.bodyThreads.contains(where: { $0.isCurrent }) {
                    Misuse.unrecoverable(
                        "StateUpdatingContext.modify called from inside its own body (or `state` set there); "
                            + "change the state through the body's inout parameter", file: file, line: line)
                }
                stored.bodyThreads.append(me)
                return (stored.state, stored.version)
            }
            var after = before
            body(&after)
            let changed = after != before
            if changed && mayFlushFirst && !flushesFirst && storage.hasNonAnimatedRequestPending {
                // Flush outside the body's registration (a renderer may change the state), then run the body
                // again on the state the flush leaves.
                self.storage.withLock { stored in
                    if let index = stored.bodyThreads.firstIndex(where: { $0.isCurrent }) {
                        stored.bodyThreads.remove(at: index)
                    }
                }
                flushesFirst = true
                storage.flushBeforeChange(true)
                continue
            }
            // (Inside a delivery the request waits in the inbox, behind what was asked there: kept too.)
            let keepsStateBefore = changed && animated == true && storage.hasNonAnimatedRequestPending
            // After the commit below, `after` holds the state it replaced.
            // The replaced state is released after the lock: its deinit (a class inside it) is the user's.
            var replaced: State?
            let committed = self.storage.withLock { stored -> Bool in
                if let index = stored.bodyThreads.firstIndex(where: { $0.isCurrent }) {
                    stored.bodyThreads.remove(at: index)
                }
                guard stored.version == version else { return false }
                if changed {
                    switch animated {
                    case false?:
                        stored.nonAnimatedPending = true
                        replaced = stored.flushState  // `T F`: everything renders without animation
                        stored.flushState = nil
                    case true?:
                        if (keepsStateBefore || stored.nonAnimatedPending && !flushesFirst) && stored.flushState == nil
                        {
                            stored.flushState = before
                        }
                        stored.nonAnimatedPending = false
                    case nil:
                        break
                    }
                    swap(&stored.state, &after)
                    stored.version &+= 1
                }
                return true
            }
            _ = replaced
            if committed { return changed }
        }
    }

    /// Registers a renderer, called on the main thread with the state at render time, the state it
    /// rendered last (`nil` the first time), and the delivery's animated flag.
    ///
    /// It renders at the end of the cycle in which it is registered, then in every delivery whose state
    /// differs from what it rendered last, and in every forced delivery (`context.update()`, the
    /// lifecycle refresh), where `oldState` is what it rendered last.
    ///
    /// - Parameters:
    ///   - file: The caller's file (`#fileID`): diagnostics name it as the site of the first render's request.
    ///   - line: The caller's line.
    ///   - render: The renderer.
    /// - Returns: A token; `remove()` removes the renderer (removal is final, as for any updater).
    @discardableResult
    public func onRender(
        file: StaticString = #fileID, line: UInt = #line,
        _ render: @escaping (_ state: State, _ oldState: State?, _ animated: Bool) -> Void
    ) -> ViewUpdatingContext.ViewUpdater {
        let token = addRenderer(initialRendered: nil) { state, old, delivery in
            render(state, old, delivery.animated)
        }
        context.setNeedsUpdate(file: file, line: line)
        return token
    }

    /// A renderer that starts as if it had rendered `initialRendered` (`nil`: never rendered) and is
    /// called with the delivery that renders; registering it requests nothing. The faces use it.
    func addRenderer(
        initialRendered: State?, _ render: @escaping (State, State?, ContextDelivery) -> Void
    ) -> ViewUpdatingContext.ViewUpdater {
        let rendered = RenderedBox<State>()
        rendered.last = initialRendered
        return context.onUpdate { [weak self] animated in
            guard let self else { return }
            let storage = context.storage
            let forced = storage.isForcedDelivery
            let current = stateToRender(earlyFlush: storage.isEarlyFlushDelivery)
            let old = rendered.last
            if !forced, let old, old == current { return }
            rendered.last = current
            render(current, old, storage.deliveryUnderWay(animated: animated, isForced: forced))
        }
    }
}

extension StateUpdatingContext {
    /// The state the delivery under way renders: in the rules' early non-animated flush, the state before
    /// the animated change (the animated delivery scheduled right after it shows that change); in every
    /// other delivery, the current state. Main thread, inside deliveries.
    ///
    /// Whether a delivery is the early flush is decided by the rules, in the order the requests are
    /// applied — not here, from the order of the commits: a non-animated change committed on another
    /// thread whose request arrives after the animated one's reads `T F`, one non-animated delivery, and
    /// that delivery must show the current state, or nothing would ever render it.
    fileprivate func stateToRender(earlyFlush: Bool) -> State {
        var dropped: State?  // released after the lock
        let state = storage.withLock { stored -> State in
            if earlyFlush {
                // Every renderer of this delivery gets the same state: it is dropped by the next delivery.
                return stored.flushState ?? stored.state
            }
            // Not the early flush: whatever it was kept for is over (or never came).
            dropped = stored.flushState
            stored.flushState = nil
            stored.nonAnimatedPending = false
            return stored.state
        }
        _ = dropped
        return state
    }
}

/// What one renderer rendered last. Touched only inside deliveries, on the main thread.
private final class RenderedBox<State> {
    var last: State?
}

// @unchecked Sendable: the state is behind a lock; renderers (and their `RenderedBox`) run only inside
// deliveries, on the main thread, one at a time; `context` is Sendable.
extension StateUpdatingContext: @unchecked Sendable where State: Sendable {}

extension DeliveryFeed {
    /// Starts announcing the renders of a state context (once; the state faces call it at the end of
    /// their init): `announce` gets the rendered state and the delivery that rendered it, only when a
    /// delivery renders (a changed state, or a forced delivery). It starts as if `initial` had been
    /// rendered, and registering it requests nothing.
    package func start<State: Equatable>(
        rendering context: StateUpdatingContext<State>, initial: State,
        _ announce: @escaping (State, ContextDelivery) -> Void
    ) {
        let token = context.addRenderer(initialRendered: initial) { state, _, delivery in announce(state, delivery) }
        hold(token)
    }

}
