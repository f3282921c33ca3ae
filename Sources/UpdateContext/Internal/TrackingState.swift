#if canImport(Observation)
import CCoalescingSupport
import NotificationCoalescing
import Observation

// The bookkeeping of a tracked updater (`onTrackingUpdater`): its trackings' generations, the sentinel that
// retires them, and what retires them when the updater goes.

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
        /// A retirement of this generation deferred until the tracked updater this one ran inside returns.
        var deferredRetirement: UInt64?
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
    ///
    /// Also answers a retirement this updater deferred (it ran inside another tracked updater, which has not
    /// returned yet): the caller makes it now, before the new tracking is installed — its sentinel slot is the
    /// new generation's, which nothing has installed a tracking on yet.
    func beginDelivery() -> (generation: UInt64, deferredRetirement: UInt64?) {
        words.withLock { words in
            let deferred = words.deferredRetirement
            if deferred != nil {
                words.deferredRetirement = nil
                words.retiringPrevious = false
            }
            words.previousArmed = words.armed
            words.previousArmedAtBegin = words.armed
            words.generation &+= 1
            words.armed = true
            words.applying = true
            words.deliveringThread = .current
            return (words.generation, deferred)
        }
    }

    /// The previous generation's retirement waits until the tracked updater this one ran inside has returned
    /// (``NestedRetirements``): that updater's tracking merged this one's sentinel slot, and changing it now
    /// would fire the tracking it keeps for write-backs.
    func deferRetirement() {
        words.withLock { $0.deferredRetirement = $0.generation &- 1 }
    }

    /// Takes the deferred retirement of `generation`, if it is still to be made (not made by a later
    /// delivery's start, nor by the updater's retirement).
    func takeDeferredRetirement(_ generation: UInt64) -> Bool {
        words.withLock { words in
            guard words.deferredRetirement == generation else { return false }
            words.deferredRetirement = nil
            return true
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
            words.deferredRetirement = nil
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
final class TrackingRetirer: Sendable {
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
protocol TrackingSentinelProtocol: Sendable {
    func change(_ generation: UInt64)
}

/// Two properties of the updater's own, one per generation parity: every tracking reads its generation's,
/// so that changing it fires (and so removes) that tracking alone. Nothing is stored: a change is
/// Observation's `willSet` and `didSet` with no mutation between, safe from any thread.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
final class TrackingSentinel: Observable, TrackingSentinelProtocol, Sendable {
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

/// The retirements deferred by tracked updaters delivered inside another tracked updater's run (a parent that
/// renders its child at once), per thread: made once the outermost run on the thread has returned and retired
/// its own, so that a parent's tracking kept for write-backs — which merged the child's sentinel slot — is not
/// fired by the child's bookkeeping. Touched only when updaters nest.
enum NestedRetirements {
    private static let deferred = Locked<[UInt64: [@Sendable () -> Void]]>([:])

    /// Defers `retire` until the outermost tracked run on this thread returns.
    static func add(_ retire: @escaping @Sendable () -> Void) {
        deferred.withLock { $0[cvu_thread_serial(), default: []].append(retire) }
        cvu_set_nested_retirements(true)
    }

    /// Makes this thread's deferred retirements (the outermost tracked run has returned).
    static func run() {
        cvu_set_nested_retirements(false)
        let retirements = deferred.withLock { $0.removeValue(forKey: cvu_thread_serial()) } ?? []
        for retire in retirements { retire() }
    }
}

#endif
