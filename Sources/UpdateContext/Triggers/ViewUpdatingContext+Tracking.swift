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
    /// > models keep nothing of it (of a tracking installed inside another tracked updater's run: from that
    /// > updater's next delivery, removal or release on — see the Note below).
    ///
    /// > Note: An updater that delivers another tracked context inside itself (that context's `update()` or
    /// > `updateIfNeeded()`) also tracks what the inner updater read — Observation merges a nested tracking into
    /// > the one around it — so a change to it delivers both, however many times the outer updater delivered it.
    /// > The inner context's own bookkeeping is never taken for a change: a tracking it installed inside the
    /// > outer updater's run is retired with that run (at the outer updater's next delivery, removal or release),
    /// > also when the inner context is delivered alone meanwhile, removed or released.
    ///
    /// > Note: Observation reports a change at its `willSet`, before the new value is stored, and no public API
    /// > reports the store (`withObservationTracking(_:onChange:)` reports at `willSet` only; the did-set
    /// > tracking that `Observations` is built on is not public). A change made on another thread is therefore
    /// > delivered when it is reported (the updater may still read the old value) and once more in the next
    /// > cycle; a writer that stalls between `willSet` and the store for longer than that leaves the view
    /// > showing the old value. Make tracked changes on the main actor, or call
    /// > ``setNeedsUpdate(animated:file:line:)`` after an off-main change. The first such change this updater
    /// > hears is reported once (`UpdateDiagnostics`, `trackedChangeOffMainThread`), naming the call that
    /// > registered it; one made while its delivery is already pending is not heard at all (Observation
    /// > reports once per tracking, and that tracking has fired).
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
    /// - Every tracking (a ``TrackedRun``) also reads a slot of this updater's sentinel that no other live
    ///   tracking of it reads, and changing that slot fires the tracking, which removes all its registrations: a
    ///   tracking is *retired* that way. The one before is kept armed while the updater runs, so that a change
    ///   the updater makes to what it read last time (a write-back) is heard and delivered again; it is retired
    ///   once the updater has returned and the new tracking is installed.
    /// - A tracking installed inside another tracked updater's run (a parent that delivers this context at
    ///   once) is merged into that run's tracking by Observation: it is retired with that run, never before
    ///   (its slot would fire the parent's tracking, and the parent's write-backs would go unheard).
    /// - The first delivery has no tracking before it: one follow-up delivery after it (coalesced with the
    ///   cycle's other requests) reads what that first run may have changed, with the first tracking armed.
    /// - The updater's closure owns a ``TrackingRetirer``: removing the updater, replacing it, `removeUpdaters()`
    ///   or the context's release drops the closure, which retires its trackings (one delivered inside another
    ///   tracked updater's run: with that run), so that nothing requests afterwards and a long-lived model keeps
    ///   nothing of an updater that is gone.
    /// - A change heard off the main thread is delivered once more in the next cycle, and reported once per
    ///   updater (`trackedChangeOffMainThread`): Observation reports before the store.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func onTrackingUpdater(named name: String, _ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        // (Registered as an ordinary updater, it always is.)
        onTrackingUpdater(named: name, asOwner: false, closure)!
    }

    /// ``onTrackingUpdater(named:_:)``; `asOwner`: the `ViewUpdating` owner's (`nil` when it is connected now).
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func onTrackingUpdater(
        named name: String, asOwner: Bool, _ closure: @escaping (_ animated: Bool) -> Void
    ) -> ViewUpdater? {
        let link = storage.link
        let label = storage.label
        let state = TrackingState()
        let sentinel = TrackingSentinel()
        let retirer = TrackingRetirer(state: state)
        /// The updater's registration, once made: asked whether it was removed before requesting after a run.
        let registration = Locked<UInt64?>(nil)
        let call: (Bool) -> Void = { animated in
            withExtendedLifetime(retirer) {}  // owned by this closure: retires the trackings when it goes
            let (run, stale) = state.beginDelivery(sentinel: sentinel, host: TrackedRun.current)
            stale?.retire()
            let generation = run.generation
            withObservationTracking {
                sentinel.read(run.slot)
                run.whileCurrent { closure(animated) }
            } onChange: {
                // Observation calls this at the change's willSet, before the new value is stored, on the
                // changing thread, once per tracking. This updater's own sentinel changing is a retirement. A
                // tracking fired by another updater's sentinel (its updater ran inside this one: Observation
                // merged what it read into this tracking) heard no change of this updater's state. The mark is
                // cleared while this runs: a request here may deliver at once, and what that delivery changes
                // is a real change.
                let changing = cvu_set_retiring_sentinel(nil)
                defer { _ = cvu_set_retiring_sentinel(changing) }
                if changing == sentinel.identity { return }
                switch state.fire(generation, bySentinelOfAnother: changing != nil) {
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
            // The updater has returned and the new tracking is installed: the one before is retired (with the
            // tracked run this one was delivered inside, if that one is still live: it merged this one's slot).
            let ended = state.endDelivery()
            ended.previous?.retire(changing: ended.previousArmed)
            guard ended.writeBack || ended.followUp else { return }
            // Removed while it ran (by itself, or `removeUpdaters()`): nothing requests, and its trackings go
            // now, not when the delivery lets its closure go.
            // (Not yet known — registered on another thread, delivered before `onUpdate` returned there — it is
            // registered.)
            if let id = registration.withLock({ $0 }), !link.hasUpdater(id) {
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
        guard let id = asOwner ? storage.addOwnerUpdater(call) : storage.addUpdater(call) else { return nil }
        registration.withLock { $0 = id }
        return ViewUpdater(storage: storage, id: id)
    }
}

extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()` (`name` is what reports call it): under Observation tracking when
    /// `tracking` is set and the system has Observation, a plain one otherwise.
    /// Returns whether it connected the owner (`false`: connected already).
    func onViewUpdater(named name: String, tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) -> Bool {
        if tracking, #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
            return onTrackingUpdater(named: name, asOwner: true, render) != nil
        }
        return storage.addOwnerUpdater(render) != nil
    }
}

#else
extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()`: without the Observation module, nothing is tracked.
    func onViewUpdater(named name: String, tracking: Bool, _ render: @escaping (_ animated: Bool) -> Void) -> Bool {
        storage.addOwnerUpdater(render) != nil
    }
}
#endif
