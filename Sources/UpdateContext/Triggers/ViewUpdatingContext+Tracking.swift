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
    /// import UIKit
    /// import UpdateContext
    /// import Observation
    ///
    /// @available(iOS 17, *)
    /// @Observable final class Model { var title = "" }
    ///
    /// @available(iOS 17, *)
    /// final class TitleViewController: UIViewController {
    ///     let updateContext = ViewUpdatingContext()
    ///     let model = Model()
    ///     private let titleLabel = UILabel()
    ///
    ///     func start() {
    ///         updateContext.onTrackedUpdate { [weak self] animated in
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

    /// An updater that runs `closure` under Observation tracking, keeping exactly one tracking alive.
    ///
    /// Observation cannot cancel a tracking: `withObservationTracking` keeps its registrations until a
    /// property it read changes. A delivery that no tracked change caused (a `@NeedsUpdate`, an explicit
    /// request) would leave the previous tracking armed beside the new one — hearing what an earlier delivery
    /// read, and growing the models' registries by one registration per such delivery. So every tracking also
    /// reads a sentinel of this updater's own, and a delivery whose previous tracking is still armed first
    /// changes the sentinel: Observation then fires that tracking, which removes all its registrations. Its
    /// `onChange` belongs to a retired generation and requests nothing.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func onTrackingUpdater(_ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        let link = storage.link
        let state = TrackingState()
        let sentinel = TrackingSentinel()
        return onUpdate { animated in
            // On the delivering thread: retire the tracking that never fired (the sentinel's change fires
            // it here, synchronously; its `onChange` sees the retirement and requests nothing).
            if state.beginRetiring() {
                sentinel.change()
            }
            let generation = state.arm()
            withObservationTracking {
                sentinel.read()
                closure(animated)
            } onChange: {
                // Observation calls this at the change's willSet, before the new value is stored. On the
                // delivering thread the store is done before the cycle ends. On another thread the delivering
                // thread may deliver (and track again) before it: this delivery must be followed by another.
                if state.fire(generation) { link.setNeedsUpdate(nil, site: RequestSite(.trackedChange)) }
            }
            // After the updater (and the tracking it set up): a delivery that answered a change made on
            // another thread may have read the value before that thread stored it, and the tracking set up
            // now only hears of the next change. Deliver once more in the next cycle, which reads the stored
            // value (and tracks again).
            // Not the context requesting itself: the change was made elsewhere (no update loop is counted).
            if state.takeChangedElsewhere() { link.setNeedsUpdate(nil, site: RequestSite(.followUp)) }
        }
    }
}

/// What a tracked updater's tracking is doing: its generation (one per delivery), whether the current one
/// is still armed, the thread that delivers (the main thread, or a manual scheduler's, or a main-queue
/// block's under `dispatchMain()`), and whether a change was reported on another thread since the last
/// delivery.
private final class TrackingState: Sendable {
    private struct Words {
        var generation: UInt64 = 0
        var armed = false
        var retiring = false
        var changedElsewhere = false
        var deliveringThread: ThreadIdentity?
    }

    private let words = Locked(Words())

    /// Retires the current generation (disarmed, it is no longer the one that requests); answers whether its
    /// tracking was still armed (never fired), so that the caller fires it through the sentinel before
    /// ``arm()`` ends the retirement.
    func beginRetiring() -> Bool {
        words.withLock { words in
            defer {
                words.armed = false
                words.retiring = true
            }
            return words.armed
        }
    }

    /// Ends the retirement and arms a new generation, tracked on the calling (delivering) thread; returns it.
    func arm() -> UInt64 {
        words.withLock { words in
            words.retiring = false
            words.generation &+= 1
            words.armed = true
            words.deliveringThread = .current
            return words.generation
        }
    }

    /// A tracking of `generation` fired; answers whether to request. The sentinel's change on the delivering
    /// thread, while retiring, requests nothing. The current generation requests once. A retired one requests
    /// only when it fired on another thread (a real change, heard just before the retirement): the delivery
    /// under way may read the value before that thread stores it. A change heard on another thread also
    /// earns the follow-up delivery.
    func fire(_ generation: UInt64) -> Bool {
        words.withLock { words in
            let onDeliveringThread = words.deliveringThread?.isCurrent ?? true
            if words.retiring && onDeliveringThread { return false }
            if generation == words.generation && words.armed {
                words.armed = false
                if !onDeliveringThread { words.changedElsewhere = true }
                return true
            }
            if !onDeliveringThread {
                words.changedElsewhere = true
                return true
            }
            return false
        }
    }

    /// Returns the mark of a change reported on another thread and clears it.
    func takeChangedElsewhere() -> Bool {
        words.withLock { words in
            defer { words.changedElsewhere = false }
            return words.changedElsewhere
        }
    }
}

/// A property of the updater's own that every tracking reads, so that changing it fires (and so removes)
/// a tracking that nothing else fired. Read and changed on the main thread only, in deliveries.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
private final class TrackingSentinel: Observable, @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only on the main thread (deliveries run there);
    // the registrar is itself thread-safe.
    private let registrar = ObservationRegistrar()
    private var value: UInt64 = 0

    func read() {
        registrar.access(self, keyPath: \.value)
    }

    func change() {
        registrar.withMutation(of: self, keyPath: \.value) { value &+= 1 }
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

#else
extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()`: without the Observation module, nothing is tracked.
    func onViewUpdater(tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) {
        onUpdate(render)
    }
}
#endif
