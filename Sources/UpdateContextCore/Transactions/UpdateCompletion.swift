import CoalescingRuntime
import Foundation

/// How a change requested with a transaction ended, as its completions are told.
public enum UpdateCompletion: Sendable, Hashable {
    /// A delivery showed it: its updaters ran, and its animation, where an updater animated through the
    /// transaction, ended. `finished` is `false` when the platform says the animation was interrupted.
    case shown(finished: Bool)
    /// No delivery will show it.
    case dropped(UpdateCompletion.DropReason)

    /// Why a request was dropped.
    public enum DropReason: Sendable, Hashable {
        /// The context was released with the request pending.
        case contextReleased
        /// The delivery that absorbed its request had no updater: nothing was there to show it.
        case noUpdaters
        /// Nothing requested an update with it: a scope whose body (and tasks) requested nothing, a `modify`
        /// that left the state equal, an `animateWithFlushedUpdates` whose changes requested nothing.
        case nothingRequested
    }

    /// Whether a delivery showed the change.
    public var wasShown: Bool {
        if case .shown = self { return true }
        return false
    }
}

/// The completions of one delivery's transaction, as one holder: released once the delivery's updaters
/// have run and every animation started through ``UpdateTransaction/animate(_:)`` has ended. Main thread.
// @unchecked Sendable: it travels inside `UpdateTransaction` values, but it is only touched on the main
// thread (the scheduler's thread), where deliveries run and platform animations complete.
package final class CompletionGroup: @unchecked Sendable {
    private var completions: [CompletionBox]
    private var outstanding = 1  // the delivery itself, until its updaters have run
    private var finished = true

    init(_ completions: [CompletionBox]) {
        self.completions = completions
    }

    /// An animation started.
    package func enter() {
        outstanding += 1
    }

    /// An animation (or the delivery's updaters) ended; the last one releases the completions as shown.
    package func leave(finished: Bool = true) {
        if !finished { self.finished = false }
        outstanding -= 1
        if outstanding == 0 { complete(.shown(finished: self.finished)) }
    }

    /// Releases each completion's hold once with `completion` (the delivery was dropped, or everything
    /// ended); a completion with no other holder runs now.
    func complete(_ completion: UpdateCompletion) {
        let boxes = completions
        completions = []
        for box in boxes { box.release(completion, endsDelivery: true) }
    }
}

/// One completion, with an identity (see ``UpdateTransaction/completions``) and a count of the requests
/// that hold it: it runs once, when the last holder lets go, with what their requests came to.
///
/// A renewable one (a subscription's: ``UpdateTransaction/withRenewableCompletions``) is never spent: it runs once per delivery that
/// shows (or drops for want of updaters) a request holding it, as that delivery ends, and the requests that
/// still hold it — made meanwhile, waiting for a later delivery — start its next run; a request dropped with
/// its context tells it once the last holder lets go.
final class CompletionBox: Sendable {
    private let call: @MainActor @Sendable (UpdateCompletion) -> Void
    private let renews: Bool

    private struct State {
        /// Requests (and scopes) holding it.
        var holds = 0
        /// Whether it ran (or is about to): no new holder is accepted. Never for a renewable box.
        var isSpent = false
        /// What the holders' requests came to (since its last run, for a renewable box).
        var shown = false
        var finished = true
        var released = false
        var noUpdaters = false
        /// A renewable box was told its context went: it is not told so again (a request racing the release
        /// may still drop after that).
        var toldReleased = false

        /// A renewable box's run that no delivery ends: once no holder is left, its requests' drop (once for
        /// the context's release), and a fresh start.
        mutating func renewedDrop() -> [UpdateCompletion] {
            guard holds == 0, released || noUpdaters || shown else { return [] }
            let outcome = outcome()
            if outcome == .dropped(.contextReleased) {
                if toldReleased { return [] }
                toldReleased = true
            }
            return [outcome]
        }

        /// What the holders' requests came to, and a fresh start for a renewable box's next run.
        mutating func outcome() -> UpdateCompletion {
            defer { (shown, finished, released, noUpdaters) = (false, true, false, false) }
            if released { return .dropped(.contextReleased) }
            if shown { return .shown(finished: finished) }
            return .dropped(noUpdaters ? .noUpdaters : .nothingRequested)
        }
    }

    private let state = Locked(State())

    init(_ call: @escaping @MainActor @Sendable (UpdateCompletion) -> Void) {
        self.call = call
        renews = false
    }

    /// A renewable box for the same completion (see ``UpdateTransaction/withRenewableCompletions``).
    init(renewing box: CompletionBox) {
        call = box.call
        renews = true
    }

    /// Takes a hold for a request; `false` when the completion has run (the request goes without it).
    func hold() -> Bool {
        state.withLock { state in
            if state.isSpent { return false }
            state.holds += 1
            return true
        }
    }

    /// Gives a hold back with what its request came to (`nil`: nothing, a scope's hold); the last one
    /// calls the completion: a release of a context wins (a change it held was never shown), then a
    /// delivery that showed it, then a delivery with no updater, then "nothing requested". `endsDelivery`: the hold was a delivery's
    /// (``CompletionGroup``), which runs a renewable box at once.
    func release(_ outcome: UpdateCompletion?, endsDelivery: Bool = false) {
        let calls = state.withLock { state -> [UpdateCompletion] in
            precondition(state.holds > 0, "CompletionBox: released more times than held")
            state.holds -= 1
            if renews, endsDelivery, let outcome, outcome != .dropped(.contextReleased) {
                // A delivery that showed it (or had no updater) runs it now, for that delivery alone; what
                // other holders' requests came to meanwhile (dropped with their context) is their own run's,
                // told once no holder is left.
                return [outcome] + state.renewedDrop()
            }
            switch outcome {
            case .shown(let finished)?:
                state.shown = true
                if !finished { state.finished = false }
            case .dropped(.contextReleased)?: state.released = true
            case .dropped(.noUpdaters)?: state.noUpdaters = true
            case .dropped(.nothingRequested)?, nil: break
            }
            if renews { return state.renewedDrop() }
            guard state.holds == 0, !state.isSpent else { return [] }
            state.isSpent = true
            return [state.outcome()]
        }
        guard !calls.isEmpty else { return }
        let call = self.call
        if MainActorPlace.isCurrent {
            MainActor.assumeIsolated { for outcome in calls { call(outcome) } }
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated { for outcome in calls { call(outcome) } } }
        }
    }
}
