#if canImport(Observation)
import CCoalescingSupport
import NotificationCoalescing
import Observation

// The bookkeeping of a tracked updater (`onTrackingUpdater`): its trackings (`TrackedRun`: the current one and
// the one before), what each firing means, and what retires them when the updater goes.

/// What a tracked updater's trackings are doing: the current generation (one per delivery) and the one before
/// it, whether each is still armed, whether the updater is running (on which thread: the main thread, a
/// manual scheduler's, or a main-queue block's under `dispatchMain()`), whether a follow-up delivery is due,
/// and whether the updater is gone.
final class TrackingState: Sendable {
    private struct Words {
        var generation: UInt64 = 0
        /// The current generation's tracking, and the one before it (kept while the updater runs: write-backs).
        var current: TrackedRun?
        var previous: TrackedRun?
        /// The current generation's tracking has not fired.
        var armed = false
        /// The previous generation's tracking has not fired: kept while the updater runs (write-backs).
        var previousArmed = false
        /// The updater of the current generation is running.
        var applying = false
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
        /// Nothing: retired, or already reported.
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

    /// A delivery begins, on the delivering thread, inside `host` (the innermost tracked run under way on
    /// this thread, if any): the current generation becomes the previous one (still armed if it never fired),
    /// and a new one is armed, on a slot of `sentinel`'s own. Returns its run, and a previous run left
    /// unretired (none: each delivery's end retires the one before it), for the caller to retire.
    func beginDelivery(sentinel: any TrackingSentinelProtocol, host: TrackedRun?) -> (
        run: TrackedRun, stale: TrackedRun?
    ) {
        let slot = sentinel.takeSlot()
        return words.withLock { words in
            let stale = words.previous
            words.previous = words.current
            words.previousArmed = words.armed
            words.previousArmedAtBegin = words.armed
            words.generation &+= 1
            let run = TrackedRun(generation: words.generation, slot: slot, sentinel: sentinel, host: host)
            words.current = run
            words.armed = true
            words.applying = true
            words.deliveringThread = .current
            return (run, stale)
        }
    }

    /// The updater returned (on the delivering thread): answers the previous generation's run — for the caller
    /// to retire, changing its slot if it is still armed — whether a follow-up delivery is due (after the first
    /// delivery, or a change heard elsewhere), and whether a write-back was heard, both of which it clears.
    /// One lock.
    func endDelivery() -> (previous: TrackedRun?, previousArmed: Bool, followUp: Bool, writeBack: Bool) {
        words.withLock { words in
            words.applying = false
            let followUp = words.followUp || !words.delivered || words.writesBack && !words.previousArmedAtBegin
            let writeBack = words.writeBackHeard
            words.followUp = false
            words.writeBackHeard = false
            words.delivered = true
            let previous = words.previous
            let armed = words.previousArmed
            words.previous = nil
            words.previousArmed = false
            return (previous, armed, followUp, writeBack)
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
                guard words.previousArmed else { return .none }
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

    /// The updater is gone (any thread): nothing requests from now on. Returns its runs not yet retired, for
    /// the caller to retire.
    func retire() -> [TrackedRun] {
        words.withLock { words in
            words.retired = true
            let runs = [words.current, words.previous].compactMap { $0 }
            words.current = nil
            words.previous = nil
            words.armed = false
            words.previousArmed = false
            return runs
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

    init(state: TrackingState) {
        self.state = state
    }

    /// Retires the trackings now (the updater was removed while it ran); its release later finds none left.
    func retire() {
        for run in state.retire() { run.retire() }
    }

    deinit {
        retire()
    }
}

#endif
