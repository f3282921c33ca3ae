import Foundation
import NotificationCoalescing

/// Where a context made by ``ViewUpdatingContext/makeForUpdatePropertiesPass(label:animated:refreshEvents:file:line:)`` asks
/// for UIKit's pass: set by `deliverInUpdateProperties(of:)`, read on the main thread.
final class PropertiesPassBinding: Sendable {
    private struct State {
        var request: (@Sendable () -> Void)?
        /// The context's label, for the report of a pass requested before any binding.
        var label: DiagnosticLabel?
        var reportedUnbound = false
    }

    private let state = Locked(State())

    func bind(_ request: @escaping @Sendable () -> Void) {
        state.withLock { $0.request = request }
    }

    /// Names the context in the report of a missing binding.
    func label(_ label: DiagnosticLabel) {
        state.withLock { $0.label = label }
    }

    /// Asks the bound view for its pass. Unbound — `deliverInUpdateProperties(of:)` never called — the
    /// scheduler's fallback delivers from the main queue instead: reported once, through `UpdateDiagnostics`.
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
                UpdateDiagnostics.Report(
                    kind: .unboundPropertiesPass, label: unboundLabel.string,
                    message: "a context made with makeForUpdatePropertiesPass() was never bound to its view: "
                        + "updates are delivered from the main queue, outside UIKit's update-properties pass. "
                        + "Call deliverInUpdateProperties(of:) with the view or view controller it updates."))
        }
    }
}

extension ViewUpdatingContext {
    /// A context meant to deliver inside UIKit's `updateProperties()` pass (iOS 26), before layout, where
    /// UIKit tracks the `@Observable` properties the updaters read.
    ///
    /// Bind it to its view or view controller with `deliverInUpdateProperties(of:)`, and call
    /// ``updateIfNeeded(file:line:)`` from the override of `updateProperties()`:
    ///
    /// ```swift
    /// import UpdateContext
    /// import UIKit
    ///
    /// final class TitleView: UIView, ViewUpdating {
    ///     let updateContext = ViewUpdatingContext.makeForUpdatePropertiesPass()
    ///     let label = UILabel()
    ///     var title = "" { didSet { updateContext.setNeedsUpdate() } }
    ///
    ///     override init(frame: CGRect) {
    ///         super.init(frame: frame)
    ///         updateContext.deliverInUpdateProperties(of: self)
    ///         startUpdatingView()
    ///     }
    ///
    ///     required init?(coder: NSCoder) { fatalError() }
    ///
    ///     func updateView(animated: Bool) { label.text = title }
    ///
    ///     @available(iOS 26, *)
    ///     override func updateProperties() {
    ///         super.updateProperties()
    ///         updateContext.updateIfNeeded()    // the updaters run here, inside UIKit's pass
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
    /// A context that is never bound falls back to the main queue; that is reported once, through
    /// `UpdateDiagnostics`, as an `unboundPropertiesPass` report naming its label.
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
        let scheduler = PassScheduler { binding.requestPass() }
        let context = ViewUpdatingContext(
            label: label, animated: animated, scheduler: scheduler, refreshEvents: refreshEvents, file: file,
            line: line)
        _ = context.face { binding }
        binding.label(context.storage.label)
        return context
    }

    /// Binds a context to the pass that `request` asks for (what `deliverInUpdateProperties(of:)` does with
    /// the view's `setNeedsUpdateProperties()`); does nothing for a context made otherwise.
    func bindPass(_ request: @escaping @Sendable () -> Void) {
        storage.link.face(PropertiesPassBinding.self)?.bind(request)
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
    /// `updateProperties()` pass (iOS 26). Does nothing below iOS 26, or for a context made otherwise.
    ///
    /// The view is held weakly. Main thread.
    @MainActor
    public func deliverInUpdateProperties(of view: UIView) {
        #if canImport(UIKit, _version: 9000)
        if #available(iOS 26, tvOS 26, visionOS 26, *) {
            let target = WeakMainActorObject(view)
            bindPass { MainActor.assumeIsolated { (target.object as? UIView)?.setNeedsUpdateProperties() } }
        }
        #endif
    }

    /// Makes a context from ``makeForUpdatePropertiesPass(label:animated:refreshEvents:file:line:)`` ask `controller` for its
    /// `updateProperties()` pass (iOS 26). Does nothing below iOS 26, or for a context made otherwise.
    ///
    /// The controller is held weakly. Main thread.
    @MainActor
    public func deliverInUpdateProperties(of controller: UIViewController) {
        #if canImport(UIKit, _version: 9000)
        if #available(iOS 26, tvOS 26, visionOS 26, *) {
            let target = WeakMainActorObject(controller)
            bindPass {
                MainActor.assumeIsolated { (target.object as? UIViewController)?.setNeedsUpdateProperties() }
            }
        }
        #endif
    }
}

/// A weak reference to a main-actor object, read only on the main thread.
private final class WeakMainActorObject: @unchecked Sendable {
    // @unchecked Sendable: `object` is set at creation and read only inside `MainActor.assumeIsolated`
    // (the pass scheduler calls its request on the main thread).
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
#endif
