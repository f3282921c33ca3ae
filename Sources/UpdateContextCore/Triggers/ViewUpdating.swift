import CoalescingRuntime
import Foundation

/// A class whose view the library keeps up to date: the one obvious way to use this package.
///
/// Shaped like UIKit's `setNeedsLayout()` / `layoutSubviews()`: state changes *request* an update, and
/// the library calls your one override point, ``updateView(animated:)``, once at the end of the run-loop
/// cycle, however many requests the cycle made.
///
/// ```swift
/// import UpdateContext
/// import UIKit
///
/// final class ProfileViewController: UIViewController, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @NeedsUpdate var name = ""                               // changes request an update
///     @NeedsUpdate(animated: true) var color = UIColor.black   // animated ones
///     private let nameView = UILabel()
///
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         view.addSubview(nameView)
///         startUpdatingView()          // renders now, then once per cycle with changes
///     }
///
///     func updateView(animated: Bool) {
///         nameView.text = name
///         updateContext.animateChanges { self.view.backgroundColor = self.color }   // when animated
///     }
/// }
/// ```
///
/// ``startUpdatingView(tracksObservation:file:line:)`` registers ``updateView(animated:)`` with the context, weakly (no `lazy var`,
/// no `[weak self]`: the context never keeps the object alive), and renders once at once, not animated.
/// Then every ``NeedsUpdate`` property and every ``setNeedsUpdate(animated:file:line:)`` feeds the context, and the
/// rules of ``ViewUpdatingContext/setNeedsUpdate(animated:file:line:)`` decide the flag. Requests made before
/// `startUpdatingView()` — property values set in `init` — are shown by its first render.
///
/// Main-actor classes, such as view controllers, conform with a `let` (a `ViewUpdatingContext` is
/// `Sendable`, so the property is usable from any isolation), and implement ``updateView(animated:)`` as an
/// ordinary main-actor method.
public protocol ViewUpdating: AnyObject {
    /// The context that ``NeedsUpdate`` properties and ``setNeedsUpdate(animated:file:line:)`` request updates on.
    var updateContext: ViewUpdatingContext { get }

    /// Brings the view up to date with the object's state: the library calls it on the main thread, once
    /// per cycle with requests, after ``startUpdatingView(tracksObservation:file:line:)``. Don't call it yourself; call
    /// ``setNeedsUpdate(animated:file:line:)`` (or ``updateViewIfNeeded(file:line:)`` to render pending changes now).
    ///
    /// - Parameter animated: Whether to animate the changes, as the context's rules decide.
    @MainActor func updateView(animated: Bool)
}

extension ViewUpdating {
    /// Connects ``updateView(animated:)`` to ``updateContext``, and renders once at once, not animated.
    ///
    /// Call it once the views exist (`viewDidLoad`, `awakeFromNib`, the end of a view's `init`). The
    /// registration is weak: the context, which the object owns, never keeps the object alive, and a
    /// released object is never called. A second call does nothing: one object renders once per delivery.
    /// To stop, call `updateContext.removeUpdaters()`; a call after that starts again (and renders at once).
    ///
    /// **What `updateView` reads is tracked.** Where Observation exists (iOS 17, macOS 14, tvOS 17,
    /// watchOS 10, visionOS 1, Linux), each call of ``updateView(animated:)`` runs under Observation
    /// tracking, as UIKit 26 does for `updateProperties()`; only what the last delivery read is tracked. Below
    /// iOS 17 / macOS 14 nothing is tracked. Pass `tracksObservation: false` to track nothing (the object's own
    /// ``NeedsUpdate`` properties and requests still work as always). What tracking guarantees:
    ///
    /// - A change made on the main actor requests one update, coalesced with every other request of the cycle
    ///   and carrying the current transaction; the view ends showing it.
    /// - Inside `withUpdateAnimation`/`withUpdateTransaction` a change animates and its completion waits for
    ///   it, whatever changed earlier in the cycle: entering a scope that animates or carries a completion
    ///   first delivers what is pending.
    /// - A change made on another thread is delivered, and once more in the next cycle. Observation reports it
    ///   before the value is stored, so a writer that stalls between the two leaves the view showing the old
    ///   value: make tracked changes on the main actor, or call ``setNeedsUpdate(animated:file:line:)`` after
    ///   an off-main change. Such a change is reported (`UpdateDiagnostics`, `trackedChangeOffMainThread`),
    ///   naming this type's `updateView(animated:)`: the first one in release builds, every one (counted, at most
    ///   once a second) in debug builds; one made while a delivery is already pending is not heard at all
    ///   (Observation reports once per tracking).
    /// - A change ``updateView(animated:)`` makes to what it read (a write-back) is delivered again, and reported
    ///   once (`writeBack`), when the tracking of the delivery before still listens: in a delivery that no
    ///   tracked change caused. A write-back in the first render, or in a delivery that a tracked change caused,
    ///   is not heard (the stated limit): change state outside `updateView`. Every cycle is the `updateLoop`
    ///   report. The first cycle renders once.
    /// - Removing the updater (`updateContext.removeUpdaters()`, also from inside `updateView`) or releasing the
    ///   context ends the tracking.
    /// - Rendering another tracked object inside `updateView` (its `updateViewIfNeeded()`, or its context's
    ///   `update()`) tracks what it read in this run, not its own: a change to it requests both.
    ///
    /// ```swift
    /// import Observation
    /// import UpdateContext
    ///
    /// // Observation needs iOS 17, macOS 14, tvOS 17 or watchOS 10 (Linux: any)
    /// @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    /// @Observable final class Account { var name = "" }
    ///
    /// @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    /// final class AccountPresenter: ViewUpdating {
    ///     let updateContext = ViewUpdatingContext()
    ///     let account = Account()
    ///     var shown = ""
    ///
    ///     @MainActor func start() { startUpdatingView() }   // account.name changes now request updates
    ///
    ///     func updateView(animated: Bool) { shown = account.name }
    /// }
    /// ```
    ///
    /// **UIKit 26's update-properties pass.** On a `UIView` or `UIViewController` whose context comes from
    /// `ViewUpdatingContext.makeForUpdatePropertiesPass()` (UpdateContext), this call
    /// also binds the context to the object's pass (iOS 26): override `updateProperties()` to call
    /// ``updateViewIfNeeded(file:line:)``, and the updates are delivered there.
    ///
    /// - Parameters:
    ///   - tracksObservation: Whether ``updateView(animated:)`` runs under Observation tracking (where the
    ///     system has Observation). `true` by default.
    ///   - file: The caller's file (`#fileID`): named by a misuse message.
    ///   - line: The caller's line.
    ///
    /// > Important: `@MainActor`, like UIKit's `updatePropertiesIfNeeded()`: calling it from code that is not
    /// > on the main actor does not compile. ``updateView(animated:)`` is `@MainActor` too, whatever the
    /// > class's own isolation, so a manual scheduler a test gives the context must be created and turned on
    /// > the main thread (mark the test `@MainActor`: in Swift Testing `@MainActor @Test`, in XCTest a
    /// > `@MainActor func test…() async`). Called for a context whose scheduler turns on another thread (a
    /// > manual scheduler created there, or the main run loop's under `dispatchMain()`), this method stops the
    /// > program, in every build, with a message saying so and naming this call's line; so does a delivery
    /// > that would call ``updateView(animated:)`` off the main actor.
    @MainActor
    public func startUpdatingView(tracksObservation: Bool = true, file: StaticString = #fileID, line: UInt = #line) {
        let context = updateContext
        // On the main actor, for a context whose scheduler turns elsewhere (a manual scheduler created on another
        // thread, the main run loop's under `dispatchMain()`): every delivery would call `updateView` there.
        if !context.storage.isOnSchedulerThread {
            Misuse.unrecoverable(
                "\(type(of: self)).updateView(animated:) is @MainActor, but its context's scheduler, "
                    + "\(context.storage.withScheduler { "\(type(of: $0)) \"\($0.label)\"" }), turns on another "
                    + "thread than this one, where every delivery would call it. Under dispatchMain() (an async main, "
                    + "Swift Testing on Linux) give the context the .dispatchMain scheduler; in a test, create and turn "
                    + "the ManualScheduler on the main thread (in Swift Testing, mark the test @MainActor)",
                file: file, line: line)
        }
        let render: (Bool) -> Void = { [weak self] animated in
            guard let self else { return }
            // Where main-actor code runs: the main thread, or a main-queue block (under `dispatchMain()`
            // and Swift Testing on Linux the first thread has exited, and the main queue runs elsewhere).
            if !MainActorPlace.isCurrent {
                Misuse.unrecoverable(Self.offMainDeliveryMessage, file: file, line: line)
            }
            // nonisolated(unsafe): checked above, this runs on the main thread, where `assumeIsolated` runs
            // its body in place, so the object never crosses a thread; the compiler cannot see that.
            nonisolated(unsafe) let owner = self
            MainActor.assumeIsolated { owner.updateView(animated: animated) }
        }
        // A scheduler whose turns are someone else's pass (UIKit 26's update-properties pass) binds it to this object.
        if let pass = context.storage.withScheduler({ $0 as? any PassDrivenScheduler }) {
            pass.ownerStartedUpdating(self)
        }
        // Connected once: a removal on another thread racing this call leaves it connected once or not at all.
        guard
            context.onViewUpdater(named: "\(type(of: self)).updateView(animated:)", tracking: tracksObservation, render)
        else { return }
        context.storage.update(false, file: file, line: line)  // on the scheduler's thread: renders at once
    }

    /// What stops a `ViewUpdating` object whose context's scheduler turns off the main thread.
    static var offMainDeliveryMessage: String {
        "\(Self.self).updateView(animated:) is @MainActor, but its context's scheduler delivers on another thread "
            + "(its scheduler turns there). Create and turn the ManualScheduler on the main thread: in Swift "
            + "Testing, mark the test @MainActor (XCTest runs tests there)"
    }

    /// Asks for one call of ``updateView(animated:)`` at the end of this cycle: the context's
    /// ``ViewUpdatingContext/setNeedsUpdate(animated:file:line:)``, with the same rules. Any thread.
    ///
    /// - Parameters:
    ///   - animated: The request's flag (see the context's method).
    ///   - file: The caller's file (`#fileID`): the call site that diagnostics name (`UpdateDiagnostics`).
    ///   - line: The caller's line.
    public func setNeedsUpdate(animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line) {
        updateContext.storage.setNeedsUpdate(animated, owner: self, site: RequestSite(file: file, line: line))
    }

    /// Makes `changes` and asks for one call of ``updateView(animated:)`` for them: the context's
    /// ``ViewUpdatingContext/setNeedsUpdate(animated:file:line:_:)``, which on the main thread flushes a pending
    /// non-animated update *before* an animated change lands. Use it for state that is not a
    /// ``NeedsUpdate`` property. Any thread; from another thread there is no flush before the change (a
    /// pending non-animated update shows it without animation).
    ///
    /// - Parameters:
    ///   - animated: The request's flag (see the context's method).
    ///   - file: The caller's file (`#fileID`): the call site that diagnostics name (`UpdateDiagnostics`).
    ///   - line: The caller's line.
    ///   - changes: The changes, run once before this returns.
    /// - Returns: What `changes` returns.
    @discardableResult
    public func setNeedsUpdate<Result>(
        animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line, _ changes: () throws -> Result
    ) rethrows -> Result {
        let storage = updateContext.storage
        let scope = storage.willChange(animated)
        // Requested even when `changes` throws: what it changed before throwing is shown too.
        defer { storage.didChange(animated, in: scope, owner: self, site: RequestSite(file: file, line: line)) }
        return try changes()
    }

    /// Calls ``updateView(animated:)`` at once if an update is pending, like `layoutIfNeeded()`: the
    /// context's ``ViewUpdatingContext/updateIfNeeded(file:line:)``.
    ///
    /// `@MainActor`, like UIKit's `updatePropertiesIfNeeded()`: calling it from code that is not on the main
    /// actor does not compile. In UIKit 26's update-properties pass (a context from
    /// `ViewUpdatingContext.makeForUpdatePropertiesPass()` (UpdateContext)), call it
    /// from `updateProperties()`.
    @MainActor
    public func updateViewIfNeeded(file: StaticString = #fileID, line: UInt = #line) {
        updateContext.updateIfNeeded(file: file, line: line)
    }
}

/// A property that requests an update of its class's ``ViewUpdating/updateContext`` when it changes.
///
/// For an `Equatable` value, setting an equal value requests nothing; any other value requests on
/// every set. `@NeedsUpdate(animated: true)` requests an animated update (and `false` a non-animated
/// one) under the usual precedence rules; plain `@NeedsUpdate` leaves the flag to the context.
///
/// An animated change — `@NeedsUpdate(animated: true)`, or any `@NeedsUpdate` set inside
/// `withUpdateAnimation` — made on the main thread while a non-animated update is pending first
/// delivers that update, not animated, *before* storing the new value: that delivery shows the old
/// value, and the animated one at the end of the cycle animates the new one.
///
/// ```swift
/// import UIKit
/// import UpdateContext
///
/// final class DownloadViewController: UIViewController, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @NeedsUpdate var headline = ""                      // equal headlines request nothing
///     @NeedsUpdate(animated: true) var progress = 0.0     // changes animate
///
///     func updateView(animated: Bool) {}
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
            if let isEqual = old.isEqual, isEqual(old.value, newValue) {
                instance[keyPath: storageKeyPath].value = newValue
                return
            }
            // An animated change (the property's flag, or the current scope's animation) first flushes a
            // pending non-animated update, which then shows the value before it; the request follows the
            // change, so that from any thread the delivery it makes sees the new value.
            let storage = instance.updateContext.storage
            let scope = storage.willChange(old.animated)
            instance[keyPath: storageKeyPath].value = newValue
            // Diagnostics name the property (`ProfileViewController.name`): a setter cannot see its caller's line.
            storage.didChange(
                old.animated, in: scope, owner: instance,
                site: RequestSite(.property(owner: EnclosingSelf.self, path: storageKeyPath)))
        }
    }
}

/// A scheduler whose turns are a pass that someone else runs (UpdateContext's UIKit 26 update-properties
/// pass): the hooks through which it joins a context's `startUpdatingView()` and `updateIfNeeded()`.
package protocol PassDrivenScheduler: CoalescingScheduler {
    /// Runs the pass now if one was asked for: on such a context, `updateIfNeeded()` is how the pass arrives.
    /// Main thread, never inside a delivery.
    func runRequestedPass()

    /// The object whose `startUpdatingView()` connected a context on this scheduler (the pass binds to it).
    @MainActor func ownerStartedUpdating(_ owner: AnyObject)
}
