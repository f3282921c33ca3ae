#if canImport(Observation)
import NotificationCoalescing
import Observation

extension ViewUpdatingContext {
    /// Registers an updater that runs under Observation tracking: a change to any `@Observable`
    /// property it read requests an update, coalesced like any other request.
    ///
    /// Only what the updater actually read in its last delivery is tracked, and it tracks again on every
    /// delivery, so a branch it takes later is followed then. What UIKit does from iOS 26 in
    /// `updateProperties()`, on every platform that has the Observation module.
    ///
    /// ```swift
    /// import Observation
    ///
    /// @Observable final class Model { var title = "" }
    ///
    /// final class TitleViewController: UIViewController {
    ///     let context = ViewUpdatingContext()
    ///     let model = Model()
    ///
    ///     func start() {
    ///         context.onTrackedUpdate { [weak self] animated in
    ///             guard let self else { return }
    ///             titleLabel.text = model.title    // a change to model.title requests an update
    ///         }                                     // (the first delivery, requested now, starts tracking)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - file: The caller's file (`#fileID`): diagnostics name it as the site of the first delivery's request.
    ///   - line: The caller's line.
    ///   - closure: The updater, called on the main thread with the delivery's flag.
    /// - Returns: The updater's token.
    ///
    /// > Note: Needs the Observation module: iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, and Linux.
    ///
    /// > Important: Tracking starts with the first delivery, which registering requests (a
    /// > `setNeedsUpdate()`, coalesced with whatever else the cycle asks). A change made on any thread requests an
    /// > update (delivered on the main thread). An updater that changes what it reads requests again
    /// > every cycle: mutate state elsewhere.
    ///
    /// > Note: Observation reports a change at its `willSet`, before the new value is stored. A change
    /// > made on another thread is therefore delivered twice: once when it is reported (the updater may
    /// > still read the old value) and once more in the next cycle after that delivery, which reads the
    /// > stored value and tracks again. So the view ends up showing the last value as long as the
    /// > mutating thread completes the assignment before the main thread's next cycle; a thread that can
    /// > stall between Observation's `willSet` and the store for longer than that should call
    /// > ``setNeedsUpdate(animated:file:line:)`` after mutating. Changes made on the main thread are delivered once.
    /// >
    /// > Why not exactly once with the stored value, even where Observation can report the store (Swift 6.2
    /// > on Linux, iOS/macOS 26): the public API that hears of a change after it is stored is the
    /// > `Observations` sequence, which re-runs a closure that *computes a value* from the observed
    /// > properties after each stored change. A tracked updater is not such a closure: it renders, with side
    /// > effects, and what it reads is known only by running it. `Observations` would have to run the
    /// > updater outside its delivery to learn of the store; the tracking with a did-set option that
    /// > `Observations` is built on (`ObservationTracking` and its access list) is not public API, and
    /// > `withObservationTracking(_:onChange:)` reports at `willSet` only. So the follow-up delivery above
    /// > stays on every system.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @discardableResult
    public func onTrackedUpdate(
        file: StaticString = #fileID, line: UInt = #line, _ closure: @escaping (_ animated: Bool) -> Void
    ) -> ViewUpdater {
        let updater = onTrackingUpdater(closure)
        setNeedsUpdate(file: file, line: line)
        return updater
    }

    /// The old spelling of ``onTrackedUpdate(file:line:_:)`` (with `tracking: true`) and ``onUpdate(_:)`` (with
    /// `false`). Unlike ``onTrackedUpdate(file:line:_:)``, it does not request the first delivery: tracking starts
    /// with the next delivery, whatever makes it.
    @available(
        *, deprecated,
        message: "use onTrackedUpdate(_:) (it also requests the first delivery), or onUpdate(_:) for tracking: false"
    )
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @discardableResult
    public func onUpdate(tracking: Bool, _ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        tracking ? onTrackingUpdater(closure) : onUpdate(closure)
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func onTrackingUpdater(_ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        let link = storage.link
        let changedElsewhere = TrackingFollowUp()
        return onUpdate { animated in
            withObservationTracking {
                closure(animated)
            } onChange: {
                // Observation calls this at the change's willSet, before the new value is stored. On the
                // main thread the store is done before the cycle ends. On another thread the main thread may
                // deliver (and track again) before it: this delivery must be followed by another.
                if !ThreadIdentity.isMainThread { changedElsewhere.mark() }
                link.setNeedsUpdate(nil, site: RequestSite(.trackedChange))
            }
            // After the updater (and the tracking it set up): a delivery that answered a change made on
            // another thread may have read the value before that thread stored it, and the tracking set up
            // now only hears of the next change. Deliver once more in the next cycle, which reads the stored
            // value (and tracks again).
            // Not the context requesting itself: the change was made elsewhere (no update loop is counted).
            if changedElsewhere.take() { link.setNeedsUpdate(nil, site: RequestSite(.followUp)) }
        }
    }
}

extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()`: under Observation tracking when `tracking` is set and the system
    /// has Observation, a plain one otherwise.
    func onViewUpdater(tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) {
        if tracking, #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
            _ = onTrackingUpdater(render)
        } else {
            onUpdate(render)
        }
    }
}

/// Whether a tracked updater's change was reported on another thread since its last delivery.
private final class TrackingFollowUp: Sendable {
    private let marked = Locked(false)

    func mark() { marked.withLock { $0 = true } }

    /// Returns the mark and clears it.
    func take() -> Bool {
        marked.withLock { marked in
            defer { marked = false }
            return marked
        }
    }
}
#else
extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()`: without the Observation module, nothing is tracked.
    func onViewUpdater(tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) {
        onUpdate(render)
    }
}
#endif
