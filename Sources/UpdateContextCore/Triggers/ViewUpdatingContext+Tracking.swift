#if canImport(Observation)
import CCoalescingSupport
import CoalescingRuntime
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
    /// > `setNeedsUpdate()`, coalesced with whatever else the cycle asks). A change made on the main actor
    /// > requests an update; so does one made on another thread, delivered on the main thread — and once more
    /// > in the next cycle. Removing the updater (its token's `remove()`, ``removeUpdaters()``, also from inside
    /// > its own delivery) or releasing the context ends its tracking: nothing requests afterwards, and the
    /// > models keep nothing of it.
    ///
    /// > Note: An updater delivered inside another tracked updater's run (that context's `update()` or
    /// > `updateIfNeeded()` called from the outer updater) installs no tracking of its own: Observation merges
    /// > what it reads into the outer run's tracking, and a change to it requests both contexts. When the outer
    /// > updater's next run does not deliver it again, or the outer updater goes, it is requested once, and
    /// > tracks on its own from that delivery; a write-back in it is heard as in any delivery.
    ///
    /// > Note: Observation reports a change at its `willSet`, before the new value is stored, and no public API
    /// > reports the store. A change made on another thread is therefore delivered when it is reported (the
    /// > updater may still read the old value) and once more in the next cycle; a writer that stalls between
    /// > `willSet` and the store for longer than that leaves the view showing the old value. Make tracked changes
    /// > on the main actor, or call ``setNeedsUpdate(animated:file:line:)`` after an off-main change. Such a
    /// > change this updater hears is reported (`UpdateDiagnostics`, `trackedChangeOffMainThread`): the first one
    /// > in release builds, every one (counted, at most once a second) in debug builds; one made while its
    /// > delivery is already pending is not heard at all (Observation reports once per tracking, and that
    /// > tracking has fired).
    ///
    /// > Note: A change the updater makes to what it read (a write-back) is heard by the tracking of the
    /// > delivery before, which listens while the updater runs: it is delivered again, and reported once
    /// > (`writeBack`); doing it every cycle is the `updateLoop` report. A write-back in the first delivery, or in
    /// > one that a tracked change caused (that tracking has fired), is not heard: Observation tracks what a
    /// > closure read only once it has returned. Change state outside the updater.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @discardableResult
    public func onTrackedUpdate(
        file: StaticString = #fileID, line: UInt = #line, _ closure: @escaping (_ animated: Bool) -> Void
    ) -> ViewUpdater {
        let updater = onTrackingUpdater(named: "the tracked updater registered at \(file):\(line)", closure)!
        setNeedsUpdate(file: file, line: line)
        return updater
    }

    /// An updater that runs `closure` under Observation tracking (`name` is what reports call it): a
    /// ``TrackedUpdater`` whose deliveries are this updater's calls.
    /// `asOwner`: the `ViewUpdating` owner's updater (`startUpdatingView()`), registered unless the owner is
    /// connected now (then `nil`).
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    func onTrackingUpdater(
        named name: String, asOwner: Bool = false, _ closure: @escaping (_ animated: Bool) -> Void
    ) -> ViewUpdater? {
        // Owned by this closure alone: when the closure goes (removed, replaced, the context released), the
        // tracked updater goes and retires its tracking.
        let tracked = TrackedUpdater(storage: storage, name: name)
        let call: (Bool) -> Void = { animated in tracked.deliver(animated, closure) }
        guard let id = asOwner ? storage.addOwnerUpdater(call) : storage.addUpdater(call) else { return nil }
        tracked.registered(as: id)
        return ViewUpdater(storage: storage, id: id)
    }
}

/// One tracked updater: each delivery runs the updater under `withObservationTracking`, and a change to what
/// it read requests an update of its context. Observation cannot cancel a tracking (it keeps its registrations
/// until something it read changes, then reports once, at the change's `willSet`, and removes them), so:
///
/// - **A generation per delivery.** Each tracking knows its generation; a tracking that fires after a newer
///   one was installed asks for nothing.
/// - **A sentinel with two slots.** Each tracking also reads a slot of the updater's own — the slot of its
///   generation's parity; changing that slot fires it, which removes its registrations: how a tracking is
///   *retired* (when the next delivery has installed its own, or when the updater goes: its `deinit`), so that a
///   long-lived model keeps nothing. A tracking holds the updater weakly: only the updater's closure owns it.
/// - **Write-backs.** The tracking before keeps listening while the updater runs: a change the updater makes
///   to what it read last time is heard, delivered again once it has returned, and reported once
///   (`writeBack`). A tracking only hears what a closure read once the closure has returned, so a write-back
///   in the first delivery, or in one that a tracked change caused (that tracking has fired), is not heard:
///   a stated limit.
/// - **Nested tracked deliveries.** Observation merges a tracking begun inside another's closure into the
///   outer one. So a tracked updater delivered inside another tracked updater's run installs no tracking:
///   what it reads is that run's, and a change to it requests both contexts. The run under way on a thread is
///   the one per-thread record this needs (`cvu_tracked_run`). Why not let each nested updater track on its
///   own: its tracking would be merged into the host's anyway, and retiring it (changing its sentinel) would
///   fire the host's tracking too, re-rendering the host whenever a child re-renders alone. When a later run
///   of the host no longer delivers a child, that child is requested once, on its own, to track itself again.
/// - **Other threads.** A change heard off the delivering thread requests an update and one more in the next
///   cycle (Observation reports before the store); it is reported (`trackedChangeOffMainThread`): the first one
///   in release builds, every one, counted, at most once a second in debug builds.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
final class TrackedUpdater: Observable, Sendable {
    private struct State {
        /// The current tracking's generation (0: none yet).
        var generation: UInt64 = 0
        /// The current tracking has not fired.
        var armed = false
        /// The tracking before has not fired: it listens for write-backs while the updater runs.
        var previousArmed = false
        var running = false
        var deliveringThread: ThreadIdentity?
        /// A write-back was heard in the run under way.
        var writeBack = false
        /// A change was heard off the delivering thread: one more delivery after the next.
        var followUp = false
        /// Off-main changes heard since the last report, and when that was (the scheduler's clock in debug
        /// builds, 0 in release builds), if one was made.
        var offMainCount = 0
        var offMainReportedAt: UInt64?
        var reportedWriteBack = false
        var retired = false
        /// The updater's registration, once known (to tell that it was removed while it ran).
        var id: UInt64?
        /// The tracked updaters delivered inside the current run: what they read is this tracking's. Weakly:
        /// the model holds this updater through its tracking, and a child that goes must not be kept.
        var children: [Child] = []
    }

    /// A child updater, weakly (its updater's closure owns it).
    private struct Child {
        weak var updater: TrackedUpdater?
    }

    /// What a firing asks for: a change (and how many off-main changes to report now: 0 for none), or a
    /// write-back.
    private enum Firing {
        case none
        case change(children: [Child], offMainChanges: Int)
        case writeBack
    }

    /// The context's storage: what a change requests (it delivers nothing once the context is gone).
    private let storage: UpdateStorage
    let name: String
    private let state = Locked(State())
    /// The sentinel's registrar: the two slots, `even` and `odd`, are properties of this updater.
    private let registrar = ObservationRegistrar()

    init(storage: UpdateStorage, name: String) {
        self.storage = storage
        self.name = name
    }

    /// The updater's closure, its one owner, went (removed, replaced, its context released): its live trackings
    /// are retired, on whatever thread let it go.
    deinit {
        retire()
    }

    func registered(as id: UInt64) {
        state.withLock { $0.id = id }
    }

    /// One delivery: `closure(animated)` under a new tracking — or, inside another tracked updater's run, under
    /// that run's (Observation merges a tracking begun there into it): the host then requests this context
    /// too when what it read changes, and once more, from its next run, if that run does not deliver this
    /// one again (so that this one tracks on its own again).
    func deliver(_ animated: Bool, _ closure: (Bool) -> Void) {
        let host = cvu_tracked_run().map { Unmanaged<TrackedUpdater>.fromOpaque($0).takeUnretainedValue() }
        host?.adopt(self)
        // The tracking before keeps listening while the updater runs (write-backs), nested or not.
        var previousChildren: [Child] = []
        let generation = state.withLock { state in
            state.generation &+= 1
            state.previousArmed = state.armed
            state.armed = host == nil
            state.running = true
            state.deliveringThread = .current
            swap(&previousChildren, &state.children)
            return state.generation
        }
        if host == nil {
            withObservationTracking {
                read(slot: generation)
                let outer = cvu_set_tracked_run(Unmanaged.passUnretained(self).toOpaque())
                defer { _ = cvu_set_tracked_run(outer) }
                closure(animated)
            } onChange: { [weak self] in
                self?.fired(generation)
            }
        } else {
            // The host stays the run under way: what this delivers inside itself is the host's too.
            closure(animated)
        }
        // The updater returned (and its new tracking is installed): the one before is retired (and this one
        // too when the updater was retired while it ran: it was installed after that).
        let (retirePrevious, retired, writeBack, followUp, report, children) = state.withLock { state in
            state.running = false
            let retirePrevious = state.previousArmed
            state.previousArmed = false
            let writeBack = state.writeBack && !state.retired
            let followUp = state.followUp && !state.retired
            state.writeBack = false
            state.followUp = false
            let report = writeBack && !state.reportedWriteBack
            if report { state.reportedWriteBack = true }
            return (retirePrevious, state.retired, writeBack, followUp, report, state.children)
        }
        if retirePrevious { change(slot: generation &- 1) }
        if retired && host == nil { change(slot: generation) }
        // The contexts the previous run delivered that this one did not are no longer tracked by anyone: one
        // delivery each, on their own, tracks them again (after a change heard elsewhere: all of them, once
        // more, as for this one).
        for case let child? in previousChildren.map(\.updater)
        where followUp || !children.contains(where: { $0.updater === child }) {
            child.requestIfRegistered(site: RequestSite(.followUp))
        }
        // Removed while it ran (by itself, or `removeUpdaters()`): nothing requests; its closure, released
        // as the delivery lets go of it, retires the tracking.
        guard writeBack || followUp, isRegistered else { return }
        if writeBack {
            if report { reportWriteBack() }
            storage.setNeedsUpdateFromOutside(
                nil, site: RequestSite(.named("\(name), which changed an @Observable value it read")))
        }
        if followUp { storage.setNeedsUpdateFromOutside(nil, site: RequestSite(.followUp)) }
    }

    /// Requests this updater's context, unless the updater is gone (removed, replaced, released). Any thread.
    func requestIfRegistered(site: @autoclosure () -> RequestSite) {
        guard !state.withLock({ $0.retired }), isRegistered else { return }
        storage.setNeedsUpdateFromOutside(nil, site: site())
    }

    /// Whether the updater is still registered (not yet known — registered on another thread, delivered
    /// before `onUpdate` returned there — counts as registered).
    private var isRegistered: Bool {
        guard let id = state.withLock({ $0.id }) else { return true }
        return storage.hasUpdater(id)
    }

    /// A tracking of `generation` fired (any thread, at a change's `willSet`).
    private func fired(_ generation: UInt64) {
        // Debug builds count every off-main change, reported at most once a second: the scheduler's clock.
        let now = Misuse.isDebugBuild && !MainActorPlace.isCurrent ? storage.retainedScheduler()?.now() : nil
        let firing = state.withLock { state -> Firing in
            if state.retired { return .none }
            let elsewhere = !(state.deliveringThread?.isCurrent ?? true)
            if generation == state.generation {
                guard state.armed else { return .none }
                state.armed = false
            } else if generation == state.generation &- 1 {
                guard state.previousArmed else { return .none }
                state.previousArmed = false
                if state.running && !elsewhere {
                    state.writeBack = true
                    return .writeBack
                }
            } else if !elsewhere {
                return .none  // retired: its slot changed
            }
            // A change. One heard on another thread (even by an older generation, just before its retirement)
            // asks for one more delivery: the one under way or next may read the value before it is stored.
            var offMainChanges = 0
            if elsewhere {
                state.followUp = true
                if !MainActorPlace.isCurrent { offMainChanges = Self.offMainChangesToReport(&state, now: now) }
            }
            return .change(children: state.children, offMainChanges: offMainChanges)
        }
        guard case .change(let children, let offMainChanges) = firing else { return }
        if offMainChanges > 0 { reportOffMainThread(changes: offMainChanges) }
        let site = RequestSite(.named("a change to an @Observable value a tracked updater read"))
        storage.setNeedsUpdateFromOutside(nil, site: site)
        for case let child? in children.map(\.updater) { child.requestIfRegistered(site: site) }
    }

    /// A tracked updater delivered inside this updater's run: a change to what it read requests it too.
    private func adopt(_ child: TrackedUpdater) {
        state.withLock { state in
            state.children.removeAll { $0.updater == nil }
            if !state.children.contains(where: { $0.updater === child }) {
                state.children.append(Child(updater: child))
            }
        }
    }

    /// The updater is gone (removed, replaced, its context released): its live trackings are retired (changing
    /// their slots fires and so removes them), nothing requests from now on, and the contexts its last run
    /// delivered, which no one tracks now, are requested once each (to track on their own). Any thread,
    /// outside every lock.
    private func retire() {
        var children: [Child] = []
        let slots = state.withLock { state -> [UInt64] in
            state.retired = true
            var slots: [UInt64] = []
            if state.armed { slots.append(state.generation) }
            if state.previousArmed { slots.append(state.generation &- 1) }
            state.armed = false
            state.previousArmed = false
            swap(&children, &state.children)
            return slots
        }
        for slot in slots { change(slot: slot) }
        for case let child? in children.map(\.updater) { child.requestIfRegistered(site: RequestSite(.followUp)) }
    }

    private func reportWriteBack() {
        UpdateDiagnostics.emit(
            .writeBack, label: storage.label.string,
            message: "\(name) changed an @Observable value it read while it ran (a write-back): it was "
                + "delivered again to show the value. Change state outside updateView: a write-back in the "
                + "first delivery, or in one that a tracked change caused, is not heard.",
            callSite: .named(name))
    }

    /// One more off-main change heard (under the state's lock): how many to report now — release builds the
    /// first one only, debug builds every one, counted, at most once a second (`now`: the scheduler's clock).
    private static func offMainChangesToReport(_ state: inout State, now: UInt64?) -> Int {
        state.offMainCount += 1
        // Without a clock (release builds, a context gone), never again; with one, a second later.
        if let last = state.offMainReportedAt, now.map({ $0 &- last < UpdateDiagnostics.reportInterval }) ?? true {
            return 0
        }
        state.offMainReportedAt = now ?? 0
        defer { state.offMainCount = 0 }
        return state.offMainCount
    }

    private func reportOffMainThread(changes: Int) {
        let count = changes == 1 ? "" : " (\(changes) changes since the last report)"
        UpdateDiagnostics.emit(
            .trackedChangeOffMainThread, label: storage.label.string,
            message: "\(name) read an @Observable value that was changed off the main thread\(count). Observation "
                + "reports a change before the new value is stored, so a delivery may show the value before "
                + "it, and nothing tells the library when it is stored: make tracked changes on the main actor, "
                + "or call setNeedsUpdate() on the context after the change (both on the changing thread).",
            callSite: .named("a change on another thread"))
    }

    // The sentinel: two properties of the updater's own, one per generation's parity. Changing one fires (and so
    // removes) the tracking that read it. Nothing is stored: a change is Observation's `willSet` and `didSet`
    // with no mutation between, safe from any thread (and in `deinit`).
    var even: Void { () }
    var odd: Void { () }

    private func read(slot generation: UInt64) {
        registrar.access(self, keyPath: generation & 1 == 0 ? \.even : \.odd)
    }

    private func change(slot generation: UInt64) {
        registrar.withMutation(of: self, keyPath: generation & 1 == 0 ? \.even : \.odd) {}
    }
}

extension ViewUpdatingContext {
    /// The updater of `startUpdatingView()` (`name` is what reports call it): under Observation tracking when
    /// `tracking` is set and the system has Observation, a plain one otherwise. Returns whether it connected the
    /// owner (`false`: connected already).
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
