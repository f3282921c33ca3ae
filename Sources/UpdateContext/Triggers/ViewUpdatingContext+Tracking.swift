#if canImport(Observation)
import CCoalescingSupport
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
    /// > `setNeedsUpdate()`, coalesced with whatever else the cycle asks), and which earns one more delivery
    /// > in the next cycle (to show what the first run changed of what it read). A change made on the main actor
    /// > requests an update; so does one made on another thread, delivered on the main thread — and once more
    /// > in the next cycle. Removing the updater (its token's `remove()`, ``removeUpdaters()``, also from inside
    /// > its own delivery) or releasing the context ends its tracking: nothing requests afterwards, and the
    /// > models keep nothing of it.
    ///
    /// > Note: An updater that delivers another tracked context inside itself (that context's `update()` or
    /// > `updateIfNeeded()`) also tracks what the inner updater read — Observation merges a nested tracking into
    /// > the one around it — so a change to it delivers both. The inner context's own bookkeeping is never taken
    /// > for a change: when the inner context is delivered alone (or released), the outer updater is delivered
    /// > once more, to track again.
    ///
    /// > Note: Observation reports a change at its `willSet`, before the new value is stored, and no public API
    /// > reports the store (`withObservationTracking(_:onChange:)` reports at `willSet` only; the did-set
    /// > tracking that `Observations` is built on is not public). A change made on another thread is therefore
    /// > delivered when it is reported (the updater may still read the old value) and once more in the next
    /// > cycle; a writer that stalls between `willSet` and the store for longer than that leaves the view
    /// > showing the old value. Make tracked changes on the main actor, or call
    /// > ``setNeedsUpdate(animated:file:line:)`` after an off-main change. The first such change this updater
    /// > hears is reported once (`UpdateDiagnostics`, `trackedChangeOffMainThread`), naming the call that
    /// > registered it.
    ///
    /// > Note: A change the updater makes to what it read (a write-back) is delivered again while the tracking
    /// > of the delivery before still listens — after the first delivery, after one that no tracked change
    /// > caused, and after every delivery once it has written back — and doing it every cycle is the
    /// > `updateLoop` report. A delivery that a tracked change caused cannot hear a first write-back (Observation
    /// > has spent that tracking, and tracks what a closure read only once it has returned): change state
    /// > outside the updater.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @discardableResult
    public func onTrackedUpdate(
        file: StaticString = #fileID, line: UInt = #line, _ closure: @escaping (_ animated: Bool) -> Void
    ) -> ViewUpdater {
        let updater = onTrackingUpdater(named: "the tracked updater registered at \(file):\(line)", closure)
        setNeedsUpdate(file: file, line: line)
        return updater
    }

    /// An updater that runs `closure` under Observation tracking (`name` is what reports call it).
    ///
    /// Observation cannot cancel a tracking: `withObservationTracking` keeps its registrations until a
    /// property it read changes, and then reports once, at the change's `willSet`. So:
    ///
    /// - Every tracking also reads a sentinel of this updater's own — one of two slots, by the parity of its
    ///   generation — and changing that slot fires the tracking, which removes all its registrations: a
    ///   tracking is *retired* that way. The one before is kept armed while the updater runs, so that a change
    ///   the updater makes to what it read last time (a write-back) is heard and delivered again; it is retired
    ///   once the updater has returned and the new tracking is installed.
    /// - The first delivery has no tracking before it: one follow-up delivery after it (coalesced with the
    ///   cycle's other requests) reads what that first run may have changed, with the first tracking armed.
    /// - The updater's closure owns a ``TrackingRetirer``: removing the updater, replacing it, `removeUpdaters()`
    ///   or the context's release drops the closure, which retires both trackings, so that nothing requests
    ///   afterwards and a long-lived model keeps nothing of an updater that is gone.
    /// - A change heard off the main thread is delivered once more in the next cycle, and reported once per
    ///   updater (`trackedChangeOffMainThread`): Observation reports before the store.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func onTrackingUpdater(named name: String, _ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        let link = storage.link
        let label = storage.label
        let state = TrackingState()
        let sentinel = TrackingSentinel()
        let retirer = TrackingRetirer(state: state, sentinel: sentinel)
        /// The updater's registration, once made: asked whether it was removed before requesting after a run.
        let registration = Locked<UInt64?>(nil)
        let updater = onUpdate { animated in
            withExtendedLifetime(retirer) {}  // owned by this closure: retires the trackings when it goes
            let generation = state.beginDelivery()
            withObservationTracking {
                sentinel.read(generation)
                closure(animated)
            } onChange: {
                // Observation calls this at the change's willSet, before the new value is stored, on the
                // changing thread, once per tracking. A tracking fired by another updater's sentinel (its
                // updater ran inside this one: Observation merged what it read into this tracking) heard no
                // change of this updater's state. The mark is cleared while this runs: a request here may
                // deliver at once, and what that delivery changes is a real change.
                let changing = cvu_set_retiring_sentinel(nil)
                defer { _ = cvu_set_retiring_sentinel(changing) }
                let foreign = changing != nil && changing != sentinel.identity
                switch state.fire(generation, bySentinelOfAnother: foreign) {
                case .none: break
                case .change:
                    link.setNeedsUpdate(nil, site: RequestSite(.trackedChange))
                    HeldScopes.noteSpentTracking(of: link)
                case .changeElsewhere(let report):
                    if report { TrackingState.reportOffMainThread(name, label: label) }
                    link.setNeedsUpdate(nil, site: RequestSite(.trackedChange))
                    HeldScopes.noteSpentTracking(of: link)
                case .track:
                    link.setNeedsUpdate(nil, site: RequestSite(.followUp))
                    HeldScopes.noteSpentTracking(of: link)
                }
            }
            // The updater has returned and the new tracking is installed: the one before is retired.
            let ended = state.endDelivery()
            if ended.retiresPrevious {
                sentinel.change(generation &- 1)
                state.endRetirement()
            }
            guard ended.writeBack || ended.followUp else { return }
            // Removed while it ran (by itself, or `removeUpdaters()`): nothing requests, and its trackings go
            // now, not when the delivery lets its closure go.
            guard let id = registration.withLock({ $0 }), link.hasUpdater(id) else {
                retirer.retire()
                return
            }
            // What it changed of what it read, heard by the tracking before (a write-back): delivered again.
            if ended.writeBack { link.setNeedsUpdate(nil, site: RequestSite(.writeBack(updater: name))) }
            // After the first delivery, and after one that answered a change made on another thread (the
            // updater may have read the value before that thread stored it; the tracking set up now only hears
            // of the next change), one more delivery, in the next cycle. Not the context requesting itself.
            if ended.followUp { link.setNeedsUpdate(nil, site: RequestSite(.followUp)) }
        }
        registration.withLock { $0 = updater.id }
        return updater
    }
}

/// What a tracked updater's trackings are doing: the current generation (one per delivery) and the one before
/// it, whether each is still armed, whether the updater is running (on which thread: the main thread, a
/// manual scheduler's, or a main-queue block's under `dispatchMain()`), whether a follow-up delivery is due,
/// and whether the updater is gone.
final class TrackingState: Sendable {
    private struct Words {
        var generation: UInt64 = 0
        /// The current generation's tracking has not fired.
        var armed = false
        /// The previous generation's tracking has not fired: kept while the updater runs (write-backs).
        var previousArmed = false
        /// The updater of the current generation is running.
        var applying = false
        /// The delivering thread is retiring the previous generation (its sentinel slot is changing).
        var retiringPrevious = false
        var followUp = false
        var delivered = false
        var reportedOffMain = false
        var retired = false
        var deliveringThread: ThreadIdentity?
        /// The updater has changed what it read while it ran (a write-back was heard): from then on, a delivery
        /// that a tracked change caused (nothing could hear a write-back in it) is followed by one more.
        var writesBack = false
        /// A write-back was heard in the delivery under way: requested once the updater has returned.
        var writeBackHeard = false
        /// Whether the previous generation was still armed when the delivery under way began: if not, a tracked
        /// change caused this delivery.
        var previousArmedAtBegin = false

        /// A change heard off the delivering thread: a follow-up is due, and the first one off the main
        /// thread is reported.
        mutating func heardElsewhere() -> Firing {
            followUp = true
            let report = !reportedOffMain && !MainActorPlace.isCurrent
            if report { reportedOffMain = true }
            return .changeElsewhere(report: report)
        }
    }

    /// What a tracking that fired asks for.
    enum Firing {
        /// Nothing: retired, already reported, or the sentinel retiring it.
        case none
        /// A change: request an update.
        case change
        /// A change heard off the delivering thread: request, and report it if `true` (the first time).
        case changeElsewhere(report: Bool)
        /// The tracking was fired by another updater's sentinel, and this updater tracks nothing now: deliver
        /// once more, to track again (not a change of its own, and not the context requesting itself).
        case track
    }

    private let words = Locked(Words())

    /// A delivery begins, on the delivering thread: the current generation becomes the previous one (still
    /// armed if it never fired), and a new one is armed. Returns it.
    func beginDelivery() -> UInt64 {
        words.withLock { words in
            words.previousArmed = words.armed
            words.previousArmedAtBegin = words.armed
            words.generation &+= 1
            words.armed = true
            words.applying = true
            words.deliveringThread = .current
            return words.generation
        }
    }

    /// The updater returned (on the delivering thread): answers whether the previous generation is still
    /// armed — the caller retires it now (changing its sentinel slot), then calls ``endRetirement()`` — and
    /// whether a follow-up delivery is due (after the first delivery, or a change heard elsewhere), and
    /// whether a write-back was heard, both of which it clears. One lock in the common case.
    func endDelivery() -> (retiresPrevious: Bool, followUp: Bool, writeBack: Bool) {
        words.withLock { words in
            words.applying = false
            let followUp = words.followUp || !words.delivered || words.writesBack && !words.previousArmedAtBegin
            let writeBack = words.writeBackHeard
            words.followUp = false
            words.writeBackHeard = false
            words.delivered = true
            if words.previousArmed { words.retiringPrevious = true }
            return (words.previousArmed, followUp, writeBack)
        }
    }

    func endRetirement() {
        words.withLock { words in
            words.retiringPrevious = false
            words.previousArmed = false
        }
    }

    /// A tracking of `generation` fired (any thread): what to do. `bySentinelOfAnother`: it was fired by
    /// another updater's sentinel (that updater ran inside this one's delivery), not by a change.
    func fire(_ generation: UInt64, bySentinelOfAnother foreign: Bool = false) -> Firing {
        words.withLock { words in
            if words.retired { return .none }
            if foreign {
                // The current tracking is spent: deliver once more to track again. The one before (kept for
                // write-backs while the updater runs) is retired anyway once it returns.
                guard generation == words.generation, words.armed else {
                    if generation == words.generation &- 1 { words.previousArmed = false }
                    return .none
                }
                words.armed = false
                return .track
            }
            let onDeliveringThread = words.deliveringThread?.isCurrent ?? true
            if generation == words.generation {
                guard words.armed else { return .none }
                words.armed = false
                return onDeliveringThread ? .change : words.heardElsewhere()
            }
            if generation == words.generation &- 1 {
                guard words.previousArmed, !(words.retiringPrevious && onDeliveringThread) else { return .none }
                words.previousArmed = false
                if !onDeliveringThread { return words.heardElsewhere() }
                guard words.applying else { return .change }
                // A write-back: requested once the updater has returned (unless it was removed meanwhile).
                words.writesBack = true
                words.writeBackHeard = true
                return .none
            }
            // An older generation, already retired: only a real change heard on another thread just before its
            // retirement still counts (the delivery under way may read the value before it is stored).
            return onDeliveringThread ? .none : words.heardElsewhere()
        }
    }

    /// The updater is gone (any thread): nothing requests from now on. Returns the generations whose trackings
    /// are still armed, for the caller to retire through their sentinel slots.
    func retire() -> [UInt64] {
        words.withLock { words in
            words.retired = true
            var armed: [UInt64] = []
            if words.armed { armed.append(words.generation) }
            if words.previousArmed { armed.append(words.generation &- 1) }
            words.armed = false
            words.previousArmed = false
            return armed
        }
    }

    /// The always-on report of the first tracked change an updater heard off the main thread.
    static func reportOffMainThread(_ updater: String, label: DiagnosticLabel) {
        UpdateDiagnostics.emit(
            UpdateDiagnostics.Report(
                kind: .trackedChangeOffMainThread, label: label.string,
                message: "\(updater) read an @Observable value that was changed off the main thread. Observation "
                    + "reports a change before the new value is stored, so a delivery may show the value before "
                    + "it, and nothing tells the library when it is stored: make tracked changes on the main actor, "
                    + "or call setNeedsUpdate() on the context after the change (both on the changing thread).",
                callSite: UpdateDiagnostics.Report.CallSite(
                    file: "a change on another thread", line: 0, thread: UpdateDiagnostics.Report.CallSite.currentThread
                )))
    }
}

/// Owned by a tracked updater's closure: when the closure goes (the updater removed, replaced, or its context
/// released), its deinit retires the updater's trackings, on whatever thread let it go.
private final class TrackingRetirer: Sendable {
    private let state: TrackingState
    private let sentinel: any TrackingSentinelProtocol

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    init(state: TrackingState, sentinel: TrackingSentinel) {
        self.state = state
        self.sentinel = sentinel
    }

    /// Retires the trackings now (the updater was removed while it ran); its release later finds none armed.
    func retire() {
        for generation in state.retire() { sentinel.change(generation) }
    }

    deinit {
        retire()
    }
}

/// The sentinel as ``TrackingRetirer`` holds it (a stored property cannot have a newer type than its class's
/// availability).
private protocol TrackingSentinelProtocol: Sendable {
    func change(_ generation: UInt64)
}

/// Two properties of the updater's own, one per generation parity: every tracking reads its generation's,
/// so that changing it fires (and so removes) that tracking alone. Nothing is stored: a change is
/// Observation's `willSet` and `didSet` with no mutation between, safe from any thread.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
private final class TrackingSentinel: Observable, TrackingSentinelProtocol, Sendable {
    private let registrar = ObservationRegistrar()
    private var even: Void { () }
    private var odd: Void { () }

    func read(_ generation: UInt64) {
        registrar.access(self, keyPath: generation % 2 == 0 ? \.even : \.odd)
    }

    /// What `cvu_retiring_sentinel()` holds while this sentinel changes.
    var identity: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// Changes one slot, marked on this thread as this sentinel's (see `cvu_retiring_sentinel`): the trackings
    /// it fires that another updater installed know it was no change of theirs.
    func change(_ generation: UInt64) {
        let before = cvu_set_retiring_sentinel(identity)
        defer { _ = cvu_set_retiring_sentinel(before) }
        registrar.withMutation(of: self, keyPath: generation % 2 == 0 ? \.even : \.odd) {}
    }
}

extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()` (`name` is what reports call it): under Observation tracking when
    /// `tracking` is set and the system has Observation, a plain one otherwise.
    func onViewUpdater(named name: String, tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) {
        if tracking, #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
            _ = onTrackingUpdater(named: name, render)
        } else {
            onUpdate(render)
        }
    }
}

#else
extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()`: without the Observation module, nothing is tracked.
    func onViewUpdater(named name: String, tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) {
        onUpdate(render)
    }
}
#endif
