import CoalescingRuntime

/// Where a context keeps what the transactions of its requests carry, beside the precedence rules: the
/// merged transaction of the pending requests, and the transaction of the delivery under way. Created on
/// the first transaction (kept with the context's other side objects, in its link), so that a context that
/// never sees one pays nothing for them: a flag byte says whether anything is pending.
///
/// It partitions exactly as the rules do: a delivery absorbs everything pending, except that the rules'
/// early non-animated flush absorbs what was pending *before* the animated request that caused it.
///
/// The fast path of a repeated plain transaction reads ``repeatAnimation``: the animation of the last plain
/// transaction (an animation, nothing else) merged while nothing else changed what is pending — a request
/// repeating it on a dirty context changes nothing.
// @unchecked Sendable: every field is behind `state`'s lock, except `repeatAnimation`, which only the main
// thread (the context's scheduler's) reads and writes.
final class TransactionLedger: @unchecked Sendable {
    private struct State {
        var pending: UpdateTransaction?
        var delivering: UpdateTransaction?
    }

    private let state = Locked(State())

    /// See the type's description. Main thread only.
    var repeatAnimation: UpdateAnimation?

    init() {}

    /// Merges `transaction` after what is pending, unless `isGone` (asked under the lock) says the context
    /// is gone: then returns `false` and keeps nothing.
    func merge(_ transaction: UpdateTransaction, unless isGone: () -> Bool) -> Bool {
        let displaced = state.withLock { state -> UpdateTransaction.Displaced? in
            if isGone() { return nil }
            if state.pending == nil {
                state.pending = transaction
                return UpdateTransaction.Displaced()
            }
            return state.pending!.absorb(transaction)
        }
        // Outside the lock: an extra hold given back, and replaced values released (user deinits).
        displaced?.release()
        return displaced != nil
    }

    /// An animated request without a transaction (`animated: true`): the last animated request's animation
    /// is the context's default one.
    func animatedRequestWithoutTransaction() {
        state.withLock { $0.pending?.animation = nil }
    }

    /// Takes what is pending (for a delivery, or to set it aside).
    func takePending() -> UpdateTransaction? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// Puts back what ``takePending()`` set aside, before what is pending now.
    /// Returns `false` (keeping nothing) when `isGone`, asked under the lock, says the context is gone.
    func restore(_ saved: UpdateTransaction, unless isGone: () -> Bool) -> Bool {
        let displaced = state.withLock { state -> UpdateTransaction.Displaced? in
            if isGone() { return nil }
            var merged = saved
            var displaced = UpdateTransaction.Displaced()
            if let meanwhile = state.pending { displaced = merged.absorb(meanwhile) }
            state.pending = merged
            return displaced
        }
        displaced?.release()
        return displaced != nil
    }

    /// The transaction the delivery under way hands its updaters. The one replaced is released after the
    /// lock (its values are the user's).
    var delivering: UpdateTransaction? {
        get { state.withLock { $0.delivering } }
        set {
            var replaced = newValue
            state.withLock { swap(&$0.delivering, &replaced) }
            _ = replaced
        }
    }
}
