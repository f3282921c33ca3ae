import CoalescingRuntime
import Foundation

/// Coalesces a controller's update requests into one view update per run-loop cycle.
///
/// Call ``setNeedsUpdate(animated:file:line:)`` whenever state that the view shows changes, as often as you like
/// and from any thread; the view is updated once, on the main thread, at the end of the cycle. Call
/// ``update(animated:file:line:)`` to render at once.
///
/// The canonical path keeps the context in a ``ViewUpdating`` object: its ``NeedsUpdate`` properties
/// request, and ``ViewUpdating/startUpdatingView(tracksObservation:file:line:)`` connects its one
/// ``ViewUpdating/updateView(animated:)`` (weakly: no `[weak self]`, no `lazy var`).
///
/// ```swift
/// import UIKit
/// import UpdateContext
///
/// final class ProfileViewController: UIViewController, ViewUpdating {
///     let updateContext = ViewUpdatingContext()
///     @NeedsUpdate var name = ""
///     private let nameLabel = UILabel()
///
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         view.addSubview(nameLabel)
///         startUpdatingView()          // renders now, then once per cycle with changes
///     }
///
///     func updateView(animated: Bool) { nameLabel.text = name }
/// }
/// ```
///
/// Closures registered with ``onUpdate(_:)`` are the other style, for a renderer that is not the object
/// owning the context.
///
/// ## The animated flag
/// Every delivery passes one flag to every updater: the explicit flag of the pending requests, or
/// ``animatesByDefault`` when none gave one. An explicit `false` protects itself: a later `true` in the same
/// cycle first delivers the non-animated changes at once, then animates the rest at the end.
///
/// | requests in one cycle | deliveries |
/// | --- | --- |
/// | `setNeedsUpdate()` × n | one, at the end, with ``animatesByDefault`` |
/// | `setNeedsUpdate(animated: true)` | one, at the end, animated |
/// | `(animated: false)` then `(animated: true)` | one not animated at once, one animated at the end |
/// | `(animated: true)` then `(animated: false)` | one, at the end, not animated |
/// | `setNeedsUpdate()` then `update()` | one, at `update()`; none at the end |
///
/// ## Threads
/// > Important: Updaters run on the main thread, one delivery at a time, at the end of a run-loop pass in
/// > one of the common modes (where Core Animation commits): never while the main loop runs a private
/// > mode (code waiting synchronously in a mode of its own); such work waits for the next common pass. ``setNeedsUpdate(animated:file:line:)``
/// > may be called from any thread: a request made elsewhere is applied on the main thread, in arrival
/// > order, and delivered in its next cycle. ``update(animated:file:line:)``, ``updateIfNeeded(file:line:)``,
/// > ``suspend(file:line:)`` and ``resume(file:line:)`` belong on the main thread: elsewhere a debug build
/// > stops at the caller's line, and a release build reports the mistake through `UpdateDiagnostics` and
/// > recovers as each method says. A request made while updaters run is delivered once, in a later cycle,
/// > never recursively.
///
/// The context does not keep its owner alive (capture `[weak self]` in updaters). Released — even
/// inside one of its own updaters — it delivers nothing more and frees its updaters at once.
public final class ViewUpdatingContext: Sendable {
    /// The context's state and its updaters; it synchronises itself (see its declaration). What the other
    /// products' subscriptions hold: it outlives the context only to say it is gone.
    package let storage: UpdateStorage

    /// For `@ViewInvalidating(.update)`: a request that diagnostics name by the property's owner.
    package func setNeedsUpdate(animated: Bool?, invalidating owner: any ViewUpdating) {
        storage.setNeedsUpdate(
            animated, owner: owner,
            site: RequestSite(.named("@ViewInvalidating(.update) property of \(type(of: owner))")))
    }

    /// For the other products' property wrappers: see `UpdateStorage.flushBeforeChange(_:)`.
    package func flushBeforeChange(animated: Bool?) {
        storage.flushBeforeChange(animated)
    }

    /// What diagnostics call this context (reports, signposts, `debugDescription`): the label given to the
    /// initialiser, or where the context was created, `#fileID:#line` (`MyApp/ProfileViewController.swift:42`).
    /// Any thread.
    public var label: String { storage.label.string }

    /// Whether deliveries animate when no request said: the flag a delivery uses when no request gave an
    /// explicit one (the `animated` argument of the initialisers). Any thread.
    public var animatesByDefault: Bool {
        get { storage.animated }
        set { storage.animated = newValue }
    }

    /// The old name of ``animatesByDefault``.
    @available(*, deprecated, renamed: "animatesByDefault")
    public var animated: Bool {
        get { animatesByDefault }
        set { animatesByDefault = newValue }
    }

    /// Creates a context delivering at the end of each main run-loop cycle, refreshing on the default
    /// lifecycle events: the seed's initialiser, kept for references to it by name
    /// (`ViewUpdatingContext.init(animated:)`). A call such as `ViewUpdatingContext(animated: true)` uses
    /// ``init(label:animated:scheduler:refreshEvents:center:file:line:)``, whose default label is the call
    /// site; this one's is "ViewUpdatingContext".
    ///
    /// - Parameter animated: The default flag (``animatesByDefault``).
    @_disfavoredOverload
    public convenience init(animated: Bool = false) {
        self.init(label: "ViewUpdatingContext", animated: animated, scheduler: .mainRunLoop)
    }

    /// Creates a context delivering at the end of each main run-loop cycle (or of another scheduler's),
    /// refreshing on the default lifecycle events. With no argument, the seed's `init(animated: false)`.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext(animated: true)
    /// let quiet = ViewUpdatingContext(label: "profile header", refreshEvents: [])    // no lifecycle refresh
    /// ```
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`,
    ///     kept without an allocation. A given label costs one table entry until the context goes.
    ///   - animated: The default flag (``animatesByDefault``).
    ///   - scheduler: When a cycle ends: `.mainRunLoop` (the default, for apps and XCTest),
    ///     `.dispatchMain` for programs whose main thread runs `dispatchMain()` or an `async` main, a
    ///     `ManualScheduler` that a test turns by hand (it then stands in for the main thread: updaters
    ///     run on the thread that turns it), or your own `CoalescingScheduler` subclass. It must say that
    ///     its turns are the main thread's cycles (`isMainThreadScheduler`); any other is a programming
    ///     error, which stops the program in every build with a message naming the caller's line.
    ///   - refreshEvents: Notifications that force an ``update(animated:file:line:)`` when posted: at once when
    ///     posted on the main thread, in the next cycle when posted elsewhere (several posted together
    ///     deliver once). Empty to observe nothing.
    ///   - center: The center the refresh events are observed on.
    ///   - file: The caller's file (`#fileID`): the default label, and named by a misuse message.
    ///   - line: The caller's line: the default label, and named by a misuse message.
    public init(
        label: String? = nil,
        animated: Bool = false,
        scheduler: CoalescingScheduler = .mainRunLoop,
        refreshEvents: [Notification.Name] = ViewUpdatingContext.defaultRefreshEvents,
        center: NotificationCenter = .default,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        if !scheduler.isMainThreadScheduler {
            Misuse.unrecoverable(
                "ViewUpdatingContext needs a scheduler whose turns are the main thread's cycles "
                    + "(.mainRunLoop, .dispatchMain, a ManualScheduler, or one whose isMainThreadScheduler is true); "
                    + "got \(type(of: scheduler))", file: file, line: line)
        }
        let storage = UpdateStorage(
            animated: animated, scheduler: scheduler, label: DiagnosticLabel(label, file: file, line: line))
        self.storage = storage
        // Made on the scheduler's own thread, the context joins that thread's list of schedulers at once, so
        // that an animating scope there flushes what other threads request before the scheduler's first turn.
        if scheduler.isCurrent { scheduler.joinCurrentThread() }
        if !refreshEvents.isEmpty {
            RefreshHub.join(storage, names: refreshEvents, center: center)
        }
    }

    deinit {
        storage.noteRelease()
        storage.cancel()
        if storage.refreshes { RefreshHub.leave(storage) }
    }

    /// Registers an updater, called on the main thread with the flag of each delivery.
    ///
    /// All updaters of one delivery get the same flag. Capture the owner weakly: the context must not
    /// keep it alive. The closure is not `@Sendable`: it may capture controller state freely, and a
    /// closure written in a main-actor context (a view controller) may call main-actor methods, since it
    /// is only ever called on the main thread.
    ///
    /// Removal is final: once the token's `remove()` (or ``removeUpdaters()``, or the context's release)
    /// has returned on the main thread — inside an updater too — the updater is never called again, not
    /// even later in a delivery under way, and what it captured is released at once. From another thread,
    /// removal never waits: once it has returned no call of the updater begins, and the one call the main
    /// thread had already begun — claimed the updater, atomically with the removal, just before calling
    /// it — finishes normally (see ``ViewUpdater``). An updater added
    /// during a delivery first runs in the next.
    ///
    /// - Returns: A token; `remove()` removes this updater (any thread).
    @discardableResult
    public func onUpdate(_ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        let id = storage.addUpdater(closure)
        return ViewUpdater(storage: storage, id: id)
    }

    /// Removes every updater, at once and for good (see ``onUpdate(_:)``). Pending requests stay pending
    /// (and deliver to nobody). Any thread.
    public func removeUpdaters() {
        storage.removeAllUpdaters()
    }

    /// How many updaters are registered.
    public var updaterCount: Int { storage.updaterCount }

    /// Asks for one update at the end of this cycle; any number of requests produce one delivery.
    ///
    /// - Parameters:
    ///   - animated: `nil` leaves the flag to other requests (or ``animatesByDefault``). `false` makes the
    ///     delivery non-animated. `true` makes it animated, but first delivers at once, not animated, if a
    ///     `false` is pending, so that changes requested as non-animated never animate.
    ///   - file: The caller's file (`#fileID`): what diagnostics name as the request's call site.
    ///   - line: The caller's line.
    ///
    /// Any thread. On the main thread, a request on a context that already has an update pending with the
    /// same flag takes no lock, allocates nothing and posts nothing.
    ///
    /// > Important: Request *before* you change, or use ``setNeedsUpdate(animated:file:line:_:)``. An
    /// > animated request made after a non-animated one first delivers at once, not animated: made after
    /// > the change (in a `didSet`), that delivery already shows the change, and the animated one has
    /// > nothing left to animate. On the main thread, request in `willSet`, or pass the change as a closure
    /// > (``setNeedsUpdate(animated:file:line:_:)``): only the main thread flushes before the change.
    public func setNeedsUpdate(animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line) {
        storage.setNeedsUpdate(animated, site: RequestSite(file: file, line: line))
    }

    /// Makes `changes` and requests an update for them, in the order that keeps the animated-flag rules
    /// true: the early non-animated flush that an animated request makes (a `false` is pending) is
    /// delivered *before* `changes` run, so it shows the state before them; then `changes` run; then the
    /// request is made, and the end of the cycle shows them, animated. What ``NeedsUpdate`` properties do
    /// for you, for state the library cannot see.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// final class Panel {
    ///     let updateContext = ViewUpdatingContext()
    ///     private(set) var isExpanded = false
    ///
    ///     func expand() {
    ///         updateContext.setNeedsUpdate(animated: true) { isExpanded = true }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - animated: The request's flag, as for ``setNeedsUpdate(animated:file:line:)``. With no flag,
    ///     inside ``withUpdateTransaction(_:_:)``, the scope's transaction decides whether it animates.
    ///   - file: The caller's file (`#fileID`): what diagnostics name as the request's call site.
    ///   - line: The caller's line.
    ///   - changes: The changes; they run once, on the calling thread, before this returns. The update is
    ///     requested even when they throw (what they changed before throwing is shown too).
    /// - Returns: What `changes` returns.
    ///
    /// Any thread. The flush happens on the main thread only; from another thread `changes` run and the
    /// request follows them, applied on the main thread in arrival order like any request.
    @discardableResult
    public func setNeedsUpdate<Result>(
        animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line, _ changes: () throws -> Result
    ) rethrows -> Result {
        let scope = storage.willChange(animated)
        // Requested even when `changes` throws: what it changed before throwing is shown too.
        defer { storage.didChange(animated, in: scope, site: RequestSite(file: file, line: line)) }
        return try changes()
    }

    /// Delivers at once (synchronously) and cancels the update scheduled for the end of the cycle.
    ///
    /// - Parameters:
    ///   - animated: When given, the flag of this delivery; otherwise the pending flag, or
    ///     ``animatesByDefault``.
    ///   - file: The caller's file (`#fileID`), named by a misuse message.
    ///   - line: The caller's line, named by a misuse message.
    ///
    /// > Important: Main thread only. Called from inside an updater it does not recurse: the update is
    /// > done in a later cycle. While suspended, it is kept until ``resume(file:line:)``.
    /// >
    /// > Called on another thread — a mistake — it stops a debug build at the caller's line; a release
    /// > build reports a warning through `UpdateDiagnostics` and makes the update in the next main-thread cycle
    /// > instead (as a lifecycle refresh from another thread does).
    public func update(animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line) {
        storage.update(animated, file: file, line: line)
    }

    /// Delivers at once if an update is pending, like `layoutIfNeeded()`; otherwise does nothing.
    ///
    /// Main thread only. Called on another thread — a mistake — it stops a debug build at the caller's
    /// line; a release build reports a warning through `UpdateDiagnostics` and does nothing (what is pending is
    /// delivered at the end of the main thread's cycle).
    public func updateIfNeeded(file: StaticString = #fileID, line: UInt = #line) {
        storage.updateIfNeeded(file: file, line: line)
    }

    /// Whether an update is pending (requested and not yet delivered).
    ///
    /// Exact on the main thread. From another thread it is a snapshot that may change at once (the main
    /// thread may deliver right after); it includes requests made there that the main thread has not
    /// applied yet.
    public var isUpdatePending: Bool { storage.isUpdatePending }

    /// Stops deliveries, for a view that is off screen. Requests are kept; ``resume(file:line:)`` delivers them once.
    ///
    /// Calls nest: each `suspend()` needs one `resume()`. Main thread only: called on another thread — a
    /// mistake — it stops a debug build at the caller's line, and a release build warns through `UpdateDiagnostics`
    /// and ignores it.
    public func suspend(file: StaticString = #fileID, line: UInt = #line) {
        storage.suspend(file: file, line: line)
    }

    /// Ends one ``suspend(file:line:)``; when the last one ends, delivers at once what was requested meanwhile
    /// (once, with the flag the rules give; called inside one of the context's updaters, in the next cycle,
    /// never recursively). Main thread only.
    ///
    /// A `resume()` with no `suspend()` to end, or one called on another thread, is a mistake: a debug
    /// build stops at the caller's line; a release build warns through `UpdateDiagnostics` and ignores the call
    /// (the context stays as it was).
    public func resume(file: StaticString = #fileID, line: UInt = #line) {
        storage.resume(file: file, line: line)
    }

    /// Whether deliveries are suspended. Main thread only.
    public var isSuspended: Bool { storage.isSuspended }
}

extension ViewUpdatingContext: CustomDebugStringConvertible {
    /// What a person asks when a view did not update, answered in a few lines: the label; whether an
    /// update is pending; whether the context is suspended, and how deep; whether its work waits for a
    /// pass in a common run-loop mode (parked while the main loop runs a private mode); its scheduler, and
    /// whether and when that scheduler last turned; how many updaters it has; how many deliveries it made.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext(label: "profile header")
    /// print(updateContext.debugDescription)  // or `po updateContext` in the debugger
    /// ```
    ///
    /// Complete on the main thread. From another thread it says only what other threads can read
    /// without waiting (pending, suspended, the scheduler, the updaters).
    public var debugDescription: String { storage.diagnosticDescription }
}

extension ViewUpdatingContext.ViewUpdater: CustomDebugStringConvertible {
    /// The token and the context it belongs to (see ``ViewUpdatingContext/debugDescription``), or that the
    /// updater was removed, or its context released. Any thread.
    public var debugDescription: String { "\(description): \(contextDescription)" }
}
