import Foundation
import UpdateContextCore

/// Where a context made by ``ViewUpdatingContext/makeForUpdatePropertiesPass(label:animated:refreshEvents:file:line:)`` asks
/// for UIKit's pass: set by `startUpdatingView()` on a view or view controller, or `deliverInUpdateProperties(of:)`;
/// read on the main thread.
final class PropertiesPassBinding: Sendable {
    private struct State {
        var request: (@Sendable () -> Void)?
        /// Whether the bound view is in a window, where UIKit runs its pass (asked on the main thread).
        var isInWindow: (@Sendable () -> Bool)?
        /// The context's label, for the reports.
        var label: DiagnosticLabel?
        var reportedUnbound = false
        var reportedMissedPass = false
    }

    private let state = Locked(State())

    /// Binds the pass: `request` asks for it, `isInWindow` says whether UIKit will run it. Replaces a binding,
    /// unless `onlyIfUnbound`. Returns whether it bound.
    @discardableResult
    func bind(
        _ request: @escaping @Sendable () -> Void, isInWindow: @escaping @Sendable () -> Bool = { false },
        onlyIfUnbound: Bool = false
    ) -> Bool {
        let replaced = state.withLock { state -> (bound: Bool, old: State?) in
            if onlyIfUnbound, state.request != nil { return (false, nil) }
            let old = state
            (state.request, state.isInWindow) = (request, isInWindow)
            return (true, old)
        }
        // The replaced closures are released here, after the lock.
        return withExtendedLifetime(replaced.old) { replaced.bound }
    }

    /// Names the context in the reports.
    func label(_ label: DiagnosticLabel) {
        state.withLock { $0.label = label }
    }

    /// Asks the bound view for its pass. Unbound — neither `startUpdatingView()` on a view or view controller
    /// nor `deliverInUpdateProperties(of:)` bound it — the scheduler's fallback delivers from the main queue
    /// instead: reported once, through `UpdateDiagnostics`.
    func requestPass() {
        let (request, unboundLabel) = state.withLock { state -> ((@Sendable () -> Void)?, DiagnosticLabel?) in
            guard state.request == nil, !state.reportedUnbound else { return (state.request, nil) }
            state.reportedUnbound = true
            return (nil, state.label)
        }
        if let request {
            request()
        } else if let unboundLabel {
            UpdateDiagnostics.emit(
                .unboundPropertiesPass, label: unboundLabel.string,
                message: "a context made with makeForUpdatePropertiesPass() was never bound to its view: "
                    + "updates are delivered from the main queue, outside UIKit's update-properties pass. "
                    + "Call startUpdatingView() from the view or view controller it updates (which binds it), "
                    + "or deliverInUpdateProperties(of:) with that view.")
        }
    }

    /// The scheduler's fallback delivered (main thread): no pass came for a request. For a view in a window —
    /// where UIKit runs the pass — that is an `updateProperties()` that does not deliver: reported once.
    func fellBack() {
        let isInWindow = state.withLock { state in state.reportedMissedPass ? nil : state.isInWindow }
        guard let isInWindow, isInWindow() else { return }
        let label = state.withLock { state -> DiagnosticLabel? in
            guard !state.reportedMissedPass else { return nil }
            state.reportedMissedPass = true
            return state.label
        }
        guard let label else { return }
        UpdateDiagnostics.emit(
            .missedPropertiesPass, label: label.string,
            message: "a context bound to UIKit's update-properties pass was delivered from the main queue while "
                + "its view was in a window: its updateProperties() did not deliver. Override updateProperties() "
                + "in the view or view controller and call updateViewIfNeeded() (or the context's "
                + "updateIfNeeded()) after super.updateProperties().")
    }
}

extension ViewUpdatingContext {
    /// A context meant to deliver inside UIKit's `updateProperties()` pass (iOS 26), before layout, where
    /// UIKit tracks the `@Observable` properties the updaters read.
    ///
    /// Make it the `updateContext` of a `ViewUpdating` view or view controller — `startUpdatingView()` binds it
    /// to that view — and call `updateViewIfNeeded()` from the override of `updateProperties()`: that call is
    /// the one wiring UIKit's pass needs.
    ///
    /// ```swift
    /// import UpdateContext
    /// import UIKit
    ///
    /// final class TitleView: UIView, ViewUpdating {
    ///     let updateContext = ViewUpdatingContext.makeForUpdatePropertiesPass()
    ///     let label = UILabel()
    ///     @NeedsUpdate var title = ""
    ///
    ///     override init(frame: CGRect) {
    ///         super.init(frame: frame)
    ///         addSubview(label)
    ///         startUpdatingView()                 // on iOS 26: binds the context to this view's pass
    ///     }
    ///
    ///     required init?(coder: NSCoder) { fatalError() }
    ///
    ///     func updateView(animated: Bool) { label.text = title }
    ///
    ///     @available(iOS 26, *)
    ///     override func updateProperties() {
    ///         super.updateProperties()
    ///         updateViewIfNeeded()                // the updaters run here, inside UIKit's pass
    ///     }
    /// }
    /// ```
    ///
    /// On iOS 26 (built with an iOS 26 SDK) the context's cycle is the pass: a request calls the view's
    /// `setNeedsUpdateProperties()` (once per batch, on the main thread), and the updaters run when
    /// `updateProperties()` calls ``updateIfNeeded(file:line:)``. If no pass comes — the view is in no window, or
    /// the context was never bound — the context delivers by itself once the main queue has turned twice.
    /// Below iOS 26 it is an ordinary context delivering at the end of the main run loop's cycle, and
    /// binding does nothing.
    ///
    /// How the two paths order their work in one run-loop pass: the run-loop path delivers from an
    /// observer just before Core Animation's commit (order 2 000 000), so updaters run before UIKit's
    /// update passes of that commit, all contexts together, whether or not their views are in a window.
    /// The `updateProperties()` path delivers during the commit, view by view from the top of the
    /// hierarchy, just before each view's layout, after every run-loop observer, and only for views in a
    /// window. Both reach the screen in the same frame. Choose the pass for UIKit's Observation tracking
    /// and its ordering with the view's own property updates (traits, configuration); choose the run loop
    /// (the default) to deliver on every system, to views off screen, or from code that is not a view.
    ///
    /// A context whose owner is not the view it updates (a model object, a child view's context) is bound with
    /// `deliverInUpdateProperties(of:)`. Two mistakes are reported, once per context, through
    /// `UpdateDiagnostics`, naming its label, always (not only while recording):
    /// - `unboundPropertiesPass`: a request found the context bound to no view; it falls back to the main queue.
    /// - `missedPropertiesPass`: the fallback delivered the context while its view was in a window, where
    ///   UIKit runs the pass: the view's `updateProperties()` does not call `updateViewIfNeeded()` (or the
    ///   context's ``updateIfNeeded(file:line:)``), and every update comes a little late, outside the pass.
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`.
    ///   - animated: The default flag.
    ///   - refreshEvents: The lifecycle events that force an update (see
    ///     ``init(label:animated:scheduler:refreshEvents:center:file:line:)``).
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public static func makeForUpdatePropertiesPass(
        label: String? = nil, animated: Bool = false,
        refreshEvents: [Notification.Name] = ViewUpdatingContext.defaultRefreshEvents,
        file: StaticString = #fileID, line: UInt = #line
    ) -> ViewUpdatingContext {
        #if canImport(UIKit, _version: 9000) && !os(watchOS)
        if #available(iOS 26, tvOS 26, visionOS 26, *) {
            return passContext(label: label, animated: animated, refreshEvents: refreshEvents, file: file, line: line)
        }
        #endif
        return ViewUpdatingContext(
            label: label, animated: animated, scheduler: .mainRunLoop, refreshEvents: refreshEvents, file: file,
            line: line)
    }

    /// A context on a ``PassScheduler`` that asks for the pass through its binding (`bindPass(_:)`): the
    /// iOS 26 branch of ``makeForUpdatePropertiesPass(label:animated:refreshEvents:file:line:)``, on every platform.
    static func passContext(
        label: String? = nil, animated: Bool, refreshEvents: [Notification.Name], file: StaticString = #fileID,
        line: UInt = #line
    ) -> ViewUpdatingContext {
        let binding = PropertiesPassBinding()
        let scheduler = PassScheduler(
            requestPass: { binding.requestPass() }, fellBack: { binding.fellBack() },
            ownerStarted: { owner in binding.bind(toOwner: owner) })
        let context = ViewUpdatingContext(
            label: label, animated: animated, scheduler: scheduler, refreshEvents: refreshEvents, file: file,
            line: line)
        _ = context.face { binding }
        binding.label(context.storage.label)
        return context
    }

    /// Binds a context to the pass that `request` asks for (what `deliverInUpdateProperties(of:)` does with
    /// the view's `setNeedsUpdateProperties()`), `isInWindow` saying whether UIKit will run it; does nothing
    /// for a context made otherwise.
    /// `onlyIfUnbound`: only if nothing bound it before (the binding `startUpdatingView()` makes). Returns
    /// whether it bound.
    @discardableResult
    func bindPass(
        _ request: @escaping @Sendable () -> Void, isInWindow: @escaping @Sendable () -> Bool = { false },
        onlyIfUnbound: Bool = false
    ) -> Bool {
        storage.face(PropertiesPassBinding.self)?.bind(
            request, isInWindow: isInWindow, onlyIfUnbound: onlyIfUnbound)
            ?? false
    }
}

#if canImport(UIKit) && !os(watchOS)
import UIKit

/// UIKit 26's update-properties pass, for the package's other products (`.properties` invalidation).
package enum UIKitPropertiesPass {
    /// Calls `view.setNeedsUpdateProperties()` where the SDK and the system have it (iOS 26); returns
    /// whether it did.
    @MainActor
    package static func setNeedsUpdateProperties(of view: UIView) -> Bool {
        #if canImport(UIKit, _version: 9000)
        if #available(iOS 26, tvOS 26, visionOS 26, *) {
            view.setNeedsUpdateProperties()
            return true
        }
        #endif
        return false
    }
}

extension ViewUpdatingContext {
    /// Makes a context from ``makeForUpdatePropertiesPass(label:animated:refreshEvents:file:line:)`` ask `view` for its
    /// `updateProperties()` pass (iOS 26), replacing the binding `startUpdatingView()` made. Does nothing below
    /// iOS 26, or for a context made otherwise.
    ///
    /// `startUpdatingView()` on a `UIView` binds its context to that view already: call this for a context
    /// whose owner is not the view it updates. The view is held weakly. Main thread.
    @MainActor
    public func deliverInUpdateProperties(of view: UIView) {
        storage.face(PropertiesPassBinding.self)?.bind(toView: view, onlyIfUnbound: false)
    }

    /// Makes a context from ``makeForUpdatePropertiesPass(label:animated:refreshEvents:file:line:)`` ask `controller` for its
    /// `updateProperties()` pass (iOS 26), replacing the binding `startUpdatingView()` made. Does nothing below
    /// iOS 26, or for a context made otherwise.
    ///
    /// `startUpdatingView()` on a `UIViewController` binds its context to that controller already: call this
    /// for a context whose owner is not the controller it updates. The controller is held weakly. Main thread.
    @MainActor
    public func deliverInUpdateProperties(of controller: UIViewController) {
        storage.face(PropertiesPassBinding.self)?.bind(toController: controller, onlyIfUnbound: false)
    }
}

extension PropertiesPassBinding {
    /// What `startUpdatingView()` does for an owner that is a view or a view controller: binds an unbound
    /// update-properties context to it.
    @MainActor
    func bind(toOwner owner: AnyObject) {
        if let view = owner as? UIView {
            bind(toView: view, onlyIfUnbound: true)
        } else if let controller = owner as? UIViewController {
            bind(toController: controller, onlyIfUnbound: true)
        }
    }

    @MainActor
    fileprivate func bind(toView view: UIView, onlyIfUnbound: Bool) {
        #if canImport(UIKit, _version: 9000)
        if #available(iOS 26, tvOS 26, visionOS 26, *) {
            let target = WeakMainActorObject(view)
            bind(
                { MainActor.assumeIsolated { (target.object as? UIView)?.setNeedsUpdateProperties() } },
                isInWindow: { MainActor.assumeIsolated { (target.object as? UIView)?.window != nil } },
                onlyIfUnbound: onlyIfUnbound)
        }
        #endif
    }

    @MainActor
    fileprivate func bind(toController controller: UIViewController, onlyIfUnbound: Bool) {
        #if canImport(UIKit, _version: 9000)
        if #available(iOS 26, tvOS 26, visionOS 26, *) {
            let target = WeakMainActorObject(controller)
            bind(
                { MainActor.assumeIsolated { (target.object as? UIViewController)?.setNeedsUpdateProperties() } },
                isInWindow: {
                    MainActor.assumeIsolated { (target.object as? UIViewController)?.viewIfLoaded?.window != nil }
                },
                onlyIfUnbound: onlyIfUnbound)
        }
        #endif
    }
}

/// A weak reference to a main-actor object, read only on the main thread
private final class WeakMainActorObject: @unchecked Sendable {
    // @unchecked Sendable: `object` is set at creation and read only inside `MainActor.assumeIsolated`
    // (the pass scheduler calls its request on the main thread).
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
#else
extension PropertiesPassBinding {
    /// Without UIKit there is no pass to bind to.
    @MainActor
    func bind(toOwner owner: AnyObject) {}
}
#endif
